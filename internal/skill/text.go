package skill

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Characters that make text read differently from what it is. Front
// matter values are printed by clients (the `skills` CLI prints
// descriptions to terminals) and shown in catalogues, so there they are
// errors; in bodies and resources, which are read as documents, only the
// invisible ones and bidirectional controls are worth a warning
// ("Trojan Source").
const (
	zwnj = 0x200C // zero width non-joiner: Persian and Indic scripts need it
	zwj  = 0x200D // zero width joiner: emoji sequences and several scripts need it
	bom  = 0xFEFF
)

// isBidiControl reports the embeddings, overrides, isolates and marks that
// reorder text: U+202A-202E, U+2066-2069, U+200E, U+200F and U+061C.
func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x200E || r == 0x200F || r == 0x061C
}

// fieldRuneProblem says what r is when it may not appear in a front matter
// value, or "". Tab is allowed everywhere, a newline only where multiline.
func fieldRuneProblem(r rune, multiline bool) string {
	switch {
	case r == '\t', r == '\n' && multiline:
		return ""
	case isBidiControl(r):
		return "a bidirectional control"
	case r == 0x2028 || r == 0x2029:
		return "a line or paragraph separator"
	case unicode.Is(unicode.Cc, r):
		return "a control character"
	case r == zwnj || r == zwj, isPrependedMark(r):
		return ""
	case unicode.Is(unicode.Cf, r):
		return "an invisible formatting character"
	}
	return ""
}

// isPrependedMark reports the visible format characters that span the
// digits after them (Unicode's Prepended_Concatenation_Mark), such as
// the Arabic number sign U+0600 and end of ayah U+06DD: written text,
// though in the Cf category.
func isPrependedMark(r rune) bool {
	return r >= 0x0600 && r <= 0x0605 || r == 0x06DD || r == 0x070F || r == 0x0890 || r == 0x0891 ||
		r == 0x08E2 || r == 0x110BD || r == 0x110CD
}

// isTagChar reports the tag characters U+E0000-U+E007F: invisible, so
// they can carry text no reader sees (and a model reads), except in the
// flags below.
func isTagChar(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

// subdivisionFlags are the emoji tag sequences Unicode recommends for
// general interchange (RGI): the flags of England, Scotland and Wales,
// U+1F3F4 followed by tag characters spelling gbeng, gbsct or gbwls and
// U+E007F. Only in them are tag characters written text.
var subdivisionFlags = [][]byte{
	[]byte("\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F"),
	[]byte("\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"),
	[]byte("\U0001F3F4\U000E0067\U000E0062\U000E0077\U000E006C\U000E0073\U000E007F"),
}

// inSubdivisionFlag reports whether the tag character at b[i] is part of
// one of subdivisionFlags. The flag and tag characters are 4 bytes each
// in UTF-8.
func inSubdivisionFlag(b []byte, i int) bool {
	for _, f := range subdivisionFlags {
		for start := i - 4; start >= 0 && start > i-len(f); start -= 4 {
			if bytes.HasPrefix(b[start:], f) {
				return true
			}
		}
	}
	return false
}

// textRuneProblem says what r is when it deserves a warning in a body or
// text resource, or "". prev is the character before it (-1 at the start).
func textRuneProblem(r, prev rune) string {
	switch {
	case isBidiControl(r):
		return "a bidirectional control"
	case (r == zwj || r == zwnj) && (isEmojiPart(prev) || unicode.IsLetter(prev) || unicode.IsMark(prev)):
		return "" // joining within a word or an emoji sequence (👩‍💻) is what they are for
	case r >= 0x200B && r <= 0x200D, r == 0x2060, r == bom && prev >= 0:
		return "an invisible character"
	case isTagChar(r):
		return "an invisible tag character"
	}
	return ""
}

// isEmojiPart is a rough test for what precedes a joiner in an emoji
// sequence: a pictograph, a skin tone modifier or a variation selector.
func isEmojiPart(r rune) bool {
	return r >= 0x1F000 && r <= 0x1FAFF || r >= 0x2600 && r <= 0x27BF || r == 0xFE0F
}

// CheckText warns about bidirectional controls and invisible characters
// in b, the bytes of the text file at path: one warning, naming the first
// such character and its line and column, and how many there are. Bytes
// that do not look like text (not UTF-8, or holding a NUL byte) are not
// checked.
func CheckText(path string, b []byte) []Problem {
	if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
		return nil
	}
	return checkText(path, b, 1)
}

// suspectPrefixes are the first two bytes of every character
// textRuneProblem objects to (U+061C, U+200B-U+206F, U+FEFF,
// U+E0000-U+E0FFF), so that text is searched for them at the speed of
// bytes.Index rather than decoded rune by rune.
var suspectPrefixes = [][]byte{{0xD8, 0x9C}, {0xE2, 0x80}, {0xE2, 0x81}, {0xEF, 0xBB}, {0xF3, 0xA0}}

// checkText is CheckText for valid UTF-8 b, which starts at line
// firstLine of its file.
func checkText(path string, b []byte, firstLine int) []Problem {
	next := make([]int, len(suspectPrefixes)) // each prefix's next match at or after off, or -1
	find := func(k, from int) {
		next[k] = -1
		if i := bytes.Index(b[from:], suspectPrefixes[k]); i >= 0 {
			next[k] = from + i
		}
	}
	for k := range next {
		find(k, 0)
	}
	count, first := 0, ""
	for {
		pos := -1
		for _, n := range next {
			if n >= 0 && (pos < 0 || n < pos) {
				pos = n
			}
		}
		if pos < 0 {
			break
		}
		r, size := utf8.DecodeRune(b[pos:])
		prev := rune(-1) // the start of the file
		switch {
		case pos > 0:
			prev, _ = utf8.DecodeLastRune(b[:pos])
		case firstLine > 1:
			prev = '\n' // a body: a BOM here is not the file's
		}
		if what := textRuneProblem(r, prev); what != "" && !(isTagChar(r) && inSubdivisionFlag(b, pos)) {
			if count == 0 {
				lineStart := bytes.LastIndexByte(b[:pos], '\n') + 1
				first = fmt.Sprintf("U+%04X (%s) at line %d, column %d", r, what,
					firstLine+bytes.Count(b[:lineStart], []byte("\n")), utf8.RuneCount(b[lineStart:pos])+1)
			}
			count++
		}
		off := pos + size
		for k, n := range next {
			if n >= 0 && n < off {
				find(k, off)
			}
		}
	}
	if count == 0 {
		return nil
	}
	return []Problem{Warnf(path, RuleCharacter, "holds %d bidirectional or invisible characters, the first %s; they can make the text read differently from what it says; remove them unless they are meant", count, first)}
}

// valueProblems checks the known fields of a front matter block, every key
// and string value below them, against the character rules (an error
// names the field, the character and its position) and lim's length
// limits, reporting at most lim.MaxValueProblems of them and then one
// that counts the rest. Fields in own have a length rule of their own.
func valueProblems(path string, fields []frontmatterField, known, own map[string]bool, lim Limits) []Problem {
	var ps []Problem
	more := 0
	add := func(rule, format string, args ...any) {
		if lim.MaxValueProblems <= 0 || len(ps) < lim.MaxValueProblems {
			ps = append(ps, Errorf(path, rule, format, args...))
		} else {
			more++
		}
	}
	checkChars := func(name, what string, line int, s string, multiline bool) {
		pos := 0
		for i, r := range s {
			pos++
			if p := fieldRuneProblem(r, multiline); p != "" && !(isTagChar(r) && inSubdivisionFlag([]byte(s), i)) {
				add(RuleCharacter, "%s holds U+%04X (%s) at character %d (the %s starts on line %d); remove it", printable(name), r, p, pos, what, line)
				return
			}
		}
	}
	checkLen := func(name, s string, maxChars int, limitKey string) {
		if n := TextLen(s); maxChars > 0 && n > maxChars {
			add(RuleLimit, "%s is %d characters; the limit is %d (%s)", printable(name), n, maxChars, limitKey)
		}
	}
	var visit func(name string, n *yaml.Node, item bool, maxChars int, limitKey string)
	visit = func(name string, n *yaml.Node, item bool, maxChars int, limitKey string) {
		switch n.Kind {
		case yaml.ScalarNode:
			if isNull(n) {
				return
			}
			checkChars(name, "value", fileLine(n), n.Value, !item)
			checkLen(name, n.Value, maxChars, limitKey)
			if name == "metadata.tags" || name == "metadata.examples" {
				// Written as a comma-separated string: each part is an item.
				parts := ListItems(n.Value)
				if lim.MaxListItems > 0 && len(parts) > lim.MaxListItems {
					add(RuleLimit, "%s holds %d comma-separated items; the limit is %d (max_list_items)", name, len(parts), lim.MaxListItems)
				}
				for i := 0; name == "metadata.tags" && i < len(parts); i++ {
					checkLen(fmt.Sprintf("%s[%d]", name, i), parts[i], lim.MaxTagChars, "max_tag_chars")
				}
			}
		case yaml.SequenceNode:
			if name == "metadata.tags" {
				maxChars, limitKey = lim.MaxTagChars, "max_tag_chars"
			}
			for i, c := range n.Content {
				visit(fmt.Sprintf("%s[%d]", name, i), c, true, maxChars, limitKey)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				sub := name + "." + k.Value
				checkChars(sub, "key", fileLine(k), k.Value, false)
				checkLen(sub, k.Value, lim.MaxValueChars, "max_value_chars")
				visit(sub, n.Content[i+1], false, lim.MaxValueChars, "max_value_chars")
			}
		}
	}
	for _, f := range fields {
		if !known[f.key] {
			continue // ignored with a warning, never published
		}
		maxChars := lim.MaxValueChars
		if own[f.key] {
			maxChars = 0
		}
		visit(f.key, f.value, false, maxChars, "max_value_chars")
	}
	if more > 0 {
		ps = append(ps, Errorf(path, RuleFrontmatter, "%d more values break the character or length rules (at most %d are reported, max_value_problems); fix the ones above and validate again", more, lim.MaxValueProblems))
	}
	return ps
}

// ListItems splits a list written as a comma-separated string into its
// trimmed, non-empty items: how metadata.tags and metadata.examples given
// as a string are read.
func ListItems(s string) []string {
	out := []string{}
	for part := range strings.SplitSeq(s, ",") {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}
