package skill

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/adrg/frontmatter"
	"go.yaml.in/yaml/v3"
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// yamlFormat is the only front matter format accepted: `---` YAML `---`.
// yaml.v3 decodes into a Node so scalar values keep their source text
// (`version: 1.10` stays "1.10", not the float 1.1).
var yamlFormat = frontmatter.NewFormat("---", "---", func(data []byte, v any) error {
	return yaml.Unmarshal(data, v)
})

// field is one top-level key of a front matter block, in source order.
type field struct {
	key   string
	value *yaml.Node
}

// parseFrontmatter splits data into its front matter fields and body. data
// must already be known to start with a `---` line.
func parseFrontmatter(data []byte) ([]field, []byte, error) {
	// Hand the parser only the block: it copies everything it is given,
	// and the body can be most of the file.
	end := blockEnd(data)
	if end < 0 {
		return nil, nil, errors.New("no closing `---` line ends the front matter")
	}
	var doc yaml.Node
	_, err := frontmatter.MustParse(bytes.NewReader(data[:end]), &doc, yamlFormat)
	body := data[end:]
	if err != nil {
		if errors.Is(err, frontmatter.ErrNotFound) {
			return nil, nil, errors.New("no closing `---` line ends the front matter")
		}
		return nil, nil, fmt.Errorf("front matter is not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
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
	fields := make([]field, 0, len(root.Content)/2)
	seen := make(map[string]bool, len(root.Content)/2)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i].Value
		if seen[k] {
			return nil, nil, fmt.Errorf("key %q appears twice (line %d)", k, root.Content[i].Line)
		}
		seen[k] = true
		fields = append(fields, field{key: k, value: root.Content[i+1]})
	}
	return fields, body, nil
}

// blockEnd returns the offset just past the line that closes the front
// matter opened by data's first line, or -1. A closing line is `---` with
// surrounding white space allowed, as the parser reads it.
func blockEnd(data []byte) int {
	off := bytes.IndexByte(data, '\n') + 1
	if off == 0 {
		return -1
	}
	for off < len(data) {
		n := bytes.IndexByte(data[off:], '\n')
		lineEnd := len(data)
		if n >= 0 {
			lineEnd = off + n + 1
		}
		if string(bytes.TrimSpace(data[off:lineEnd])) == "---" {
			return lineEnd
		}
		off = lineEnd
	}
	return -1
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

// stringMap decodes a mapping whose values are scalars or lists of scalars.
// A list is joined with ", " in the string map, and also kept as a list,
// so an item holding a comma ("Review this, then that") stays one item.
func stringMap(n *yaml.Node) (map[string]string, map[string][]string, error) {
	if isNull(n) {
		return nil, nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, nil, errors.New("must be a mapping of keys to strings")
	}
	m := make(map[string]string, len(n.Content)/2)
	var lists map[string][]string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		if _, dup := m[k]; dup {
			return nil, nil, fmt.Errorf("key %q appears twice", k)
		}
		switch {
		case isNull(v):
			m[k] = ""
		case v.Kind == yaml.ScalarNode:
			m[k] = v.Value
		case v.Kind == yaml.SequenceNode:
			parts := make([]string, 0, len(v.Content))
			for _, item := range v.Content {
				s, ok := scalar(item)
				if !ok {
					return nil, nil, fmt.Errorf("key %q: list items must be strings", k)
				}
				parts = append(parts, s)
			}
			m[k] = strings.Join(parts, ", ")
			if lists == nil {
				lists = map[string][]string{}
			}
			lists[k] = parts
		default:
			return nil, nil, fmt.Errorf("key %q: value must be a string or a list of strings, not a mapping", k)
		}
	}
	return m, lists, nil
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
