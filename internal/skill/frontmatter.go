package skill

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/adrg/frontmatter"
	"go.yaml.in/yaml/v3"
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// yamlFormat is the only front matter format accepted: `---` YAML `---`.
// yaml.v3 decodes into a Node so scalar values keep their source text
// (`version: 1.10` stays "1.10", not the float 1.1).
var yamlFormat = frontmatter.NewFormat("---", "---", func(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		if err == io.EOF {
			return nil // an empty block
		}
		return err
	}
	// yaml.Unmarshal read the first document alone: after a "--- x" or
	// "..." line, the rest of the block went unread and unchecked.
	var rest yaml.Node
	if err := dec.Decode(&rest); err != io.EOF {
		return errMultiDoc
	}
	return nil
})

// errMultiDoc is the front matter error for a block of several YAML
// documents.
var errMultiDoc = errors.New("front matter holds more than one YAML document (a line such as `--- text` or `...` starts or ends one); keep it to one block of keys")

// Limits bound the front matter of one SKILL.md or agent-md file, so that
// no file can make a parse, a snapshot or a published document large. Zero
// means no limit, as 0 is off in the configuration; a caller reading
// untrusted files sets MaxDepth, since no depth is safe unbounded. The
// messages name the configuration keys that set them.
type Limits struct {
	MaxFrontmatterBytes int // the block, both `---` lines included (max_frontmatter_bytes)
	MaxKeys             int // keys of one mapping: the top level, metadata (max_frontmatter_keys)
	MaxListItems        int // items of one list, such as metadata.tags (max_list_items)
	MaxValueChars       int // UTF-16 code units of a key or string value (max_value_chars)
	MaxTagChars         int // UTF-16 code units of one metadata.tags item (max_tag_chars)
	// MaxDepth is how deep values may nest (max_frontmatter_depth): the
	// names built on the way down grow with the square of the depth.
	MaxDepth int
	// MaxValueProblems is how many character or length problems the
	// values of one file report before one more problem counts the rest
	// (max_value_problems).
	MaxValueProblems int
}

// frontmatterField is one top-level key of a front matter block, in source order.
type frontmatterField struct {
	key   string
	value *yaml.Node
}

// ruleError is a front matter error reported under a rule other than
// RuleFrontmatter.
type ruleError struct{ rule, msg string }

func (e *ruleError) Error() string { return e.msg }

// frontmatterProblem is the problem parseFrontmatter's error stands for.
func frontmatterProblem(path string, err error) Problem {
	var re *ruleError
	if errors.As(err, &re) {
		return Errorf(path, re.rule, "%s", re.msg)
	}
	return Errorf(path, RuleFrontmatter, "%s", err)
}

// parseFrontmatter splits data into its front matter fields and body. data
// must already be known to start with a `---` line. The block's size is
// checked before it is parsed and its shape (no anchors or aliases, keys
// and list items within the limits) before anything is decoded, so the
// work and memory a file can cause are bounded by lim.
func parseFrontmatter(data []byte, lim Limits) ([]frontmatterField, []byte, error) {
	doc, end, err := splitFrontmatter(data, lim.MaxFrontmatterBytes)
	if err != nil {
		return nil, nil, err
	}
	body := data[end:]
	if doc.Kind == 0 {
		return nil, body, nil // empty front matter block
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, nil, errors.New("front matter must be a YAML mapping of keys to values")
	}
	if err := checkShape(root, "front matter", lim, 0); err != nil {
		return nil, nil, err
	}
	fields := make([]frontmatterField, 0, len(root.Content)/2)
	seen := make(map[string]bool, len(root.Content)/2)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i].Value
		if seen[k] {
			return nil, nil, fmt.Errorf("key %q appears twice (line %d)", k, fileLine(root.Content[i]))
		}
		seen[k] = true
		fields = append(fields, frontmatterField{key: k, value: root.Content[i+1]})
	}
	return fields, body, nil
}

// checkShape rejects, anywhere below n (named name in messages, at depth
// depth), anchors and aliases, keys that are not plain values, nesting
// deeper than lim allows, and mappings or lists with more entries than
// the limits allow. Aliases are refused rather than resolved: a value
// written once and referenced many times is how a small YAML file expands
// into a huge document ("billion laughs"), and an alias read as a scalar
// would otherwise look like an empty value.
func checkShape(n *yaml.Node, name string, lim Limits, depth int) error {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return fmt.Errorf("YAML anchors and aliases (&name, *name, <<: *name) are not allowed in front matter (line %d); write the value out", fileLine(n))
	}
	if lim.MaxDepth > 0 && depth > lim.MaxDepth {
		return &ruleError{RuleLimit, fmt.Sprintf("front matter nests deeper than %d levels (max_frontmatter_depth), at line %d; flatten it", lim.MaxDepth, fileLine(n))}
	}
	switch n.Kind {
	case yaml.MappingNode:
		if keys := len(n.Content) / 2; lim.MaxKeys > 0 && keys > lim.MaxKeys {
			return &ruleError{RuleLimit, fmt.Sprintf("%s holds %d keys; the limit is %d (max_frontmatter_keys)", name, keys, lim.MaxKeys)}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("a key of %s is a YAML %s (line %d); keys must be plain strings", name, kindName(k.Kind), fileLine(k))
			}
			if err := checkShape(k, name, lim, depth+1); err != nil {
				return err
			}
			if err := checkShape(n.Content[i+1], subName(name, k.Value), lim, depth+1); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		if lim.MaxListItems > 0 && len(n.Content) > lim.MaxListItems {
			return &ruleError{RuleLimit, fmt.Sprintf("%s holds %d items; the limit is %d (max_list_items)", name, len(n.Content), lim.MaxListItems)}
		}
		for i, item := range n.Content {
			if err := checkShape(item, fmt.Sprintf("%s[%d]", name, i), lim, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// subName names the value of key in the mapping called name: top-level
// keys by themselves, deeper ones as a dotted path (metadata.tags).
func subName(name, key string) string {
	if name == "front matter" {
		return key
	}
	return name + "." + key
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

// splitFrontmatter parses the front matter block that opens data with
// adrg/frontmatter and returns it and the offset of the body. The parser
// copies everything it reads, so it reads at most max bytes (when max >
// 0): the largest block allowed. Neither an oversized block nor a long
// body costs more; a block with no closing line within them is too long.
func splitFrontmatter(data []byte, max int) (yaml.Node, int, error) {
	window := data
	if max > 0 && len(window) > max {
		window = window[:max]
	}
	cut := len(window) < len(data)
	errTooLong := &ruleError{RuleLimit, fmt.Sprintf("front matter is longer than %d bytes (max_frontmatter_bytes), or its closing `---` line is missing; keep it short and put long text in the body", max)}
	var doc yaml.Node
	rest, err := frontmatter.MustParse(bytes.NewReader(window), &doc, yamlFormat)
	switch {
	case errors.Is(err, frontmatter.ErrNotFound) && cut:
		return doc, 0, errTooLong
	case errors.Is(err, frontmatter.ErrNotFound):
		return doc, 0, errors.New("no closing `---` line ends the front matter")
	case errors.Is(err, errMultiDoc):
		return doc, 0, errMultiDoc
	case err != nil:
		return doc, 0, fmt.Errorf("front matter is not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	end := len(window) - len(rest)
	if cut && end == len(window) && window[end-1] != '\n' {
		// The line read as the closing `---` runs on past the limit
		// ("---x", "--- text"): it may not be one.
		return doc, 0, errTooLong
	}
	return doc, end, nil
}

// fileLine is the line of the file n starts on: the parser counts from
// the line after the opening `---`.
func fileLine(n *yaml.Node) int { return n.Line + 1 }

// bodyLine is the line of text on which body, its tail, starts.
func bodyLine(text, body []byte) int {
	return bytes.Count(text[:len(text)-len(body)], []byte("\n")) + 1
}

// stringField returns f's value when it is a string, and reports a
// value of another kind (a list, a mapping) as an error; a missing value
// is left to the caller's "is required" rule.
func stringField(f frontmatterField, errf func(rule, format string, args ...any)) string {
	if s, ok := scalar(f.value); ok || isNull(f.value) {
		return s
	}
	errf(RuleField, "%s must be a string, not a YAML %s", f.key, kindName(f.value.Kind))
	return ""
}

// startsWithDelimiter reports whether data begins with a `---` line.
func startsWithDelimiter(data []byte) bool {
	return bytes.HasPrefix(data, []byte("---\n")) || bytes.HasPrefix(data, []byte("---\r\n"))
}

// scalar returns a node's text when it is a non-null scalar.
func scalar(n *yaml.Node) (string, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", false
	}
	return n.Value, true
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// stringMap decodes a mapping whose values are scalars or lists of scalars
// into a Meta, sorted by key.
func stringMap(n *yaml.Node) (Meta, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, errors.New("must be a mapping of keys to strings")
	}
	m := make(Meta, 0, len(n.Content)/2)
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		if seen[k] {
			return nil, fmt.Errorf("key %q appears twice", k)
		}
		seen[k] = true
		e := MetaEntry{Key: k}
		switch {
		case isNull(v):
		case v.Kind == yaml.ScalarNode:
			e.Value = v.Value
		case v.Kind == yaml.SequenceNode:
			e.List = make([]string, 0, len(v.Content))
			for _, item := range v.Content {
				s, ok := scalar(item)
				if !ok {
					return nil, fmt.Errorf("key %q: list items must be strings", k)
				}
				e.List = append(e.List, s)
			}
		default:
			return nil, fmt.Errorf("key %q: value must be a string or a list of strings, not a mapping", k)
		}
		m = append(m, e)
	}
	slices.SortFunc(m, func(a, b MetaEntry) int { return strings.Compare(a.Key, b.Key) })
	return m, nil
}

// stringList accepts a string or a list of strings and returns them joined
// with a space (allowed-tools is space-separated in the specification).
func stringList(n *yaml.Node) (string, error) {
	if isNull(n) {
		return "", nil
	}
	if s, ok := scalar(n); ok {
		return s, nil
	}
	if n.Kind != yaml.SequenceNode {
		return "", errors.New("must be a string or a list of strings")
	}
	parts := make([]string, 0, len(n.Content))
	for _, item := range n.Content {
		s, ok := scalar(item)
		if !ok {
			return "", errors.New("list items must be strings")
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " "), nil
}

// Body is the text of a SKILL.md or agent-md file after its front matter
// (and a BOM): what a reader of the instructions sees. A file with no
// complete front matter block is all body.
func Body(data []byte) []byte {
	data = bytes.TrimPrefix(data, utf8BOM)
	if !startsWithDelimiter(data) {
		return data
	}
	if _, end, err := splitFrontmatter(data, 0); err == nil {
		return data[end:]
	}
	return data
}
