package skill

import (
	"bytes"
	"encoding/json"
	"math"

	"go.yaml.in/yaml/v3"
)

// FrontmatterJSON is the front matter of the SKILL.md bytes data as one
// JSON object: every key, known or not, in the order the file wrote them,
// and values typed as YAML 1.2's core schema types them (`version: 1.10`
// is the number 1.1, `"1.10"` the string): what a host that parses the
// same block with any YAML library compares against (the MCP skills
// extension's `frontmatter`). A value JSON cannot hold (.inf, .nan) is its
// source text. It is nil when the block does not parse.
//
// It is made from the file's bytes when asked for, not kept beside each
// published version: data is a published SKILL.md, which ParseSkill
// accepted within the configured limits, so it is parsed here without
// them.
func FrontmatterJSON(data []byte) json.RawMessage {
	text := bytes.TrimPrefix(data, utf8BOM)
	if !startsWithDelimiter(text) {
		return nil
	}
	fields, _, err := parseFrontmatter(text, Limits{})
	if err != nil {
		return nil
	}
	return frontmatterJSON(fields)
}

func frontmatterJSON(fields []frontmatterField) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSON(&b, f.key)
		b.WriteByte(':')
		writeNode(&b, f.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func writeNode(b *bytes.Buffer, n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, n.Content[i].Value)
			b.WriteByte(':')
			writeNode(b, n.Content[i+1])
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			writeNode(b, c)
		}
		b.WriteByte(']')
	default:
		writeJSON(b, scalarValue(n))
	}
}

// scalarValue is n as YAML 1.2's core schema reads it: null, a boolean,
// an integer or a float, else its text (a date stays text, as the core
// schema has no timestamps).
func scalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool", "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err != nil {
			return n.Value
		}
		if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
			return n.Value
		}
		return v
	}
	return n.Value
}

// writeJSON appends v encoded, without HTML escaping: the front matter
// travels in JSON documents, never in HTML.
func writeJSON(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		b.WriteString("null")
		return
	}
	b.Truncate(b.Len() - 1) // Encode's newline
}
