package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MarkdownTable renders Keys as the table in docs/configuration.md; a test
// keeps the two equal.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("**Zero.** For every number and duration key, " + Off + ". The last column says so per key; a key that refuses 0 says why.\n\n")
	b.WriteString("| key | flag | environment | default | meaning | 0 |\n|---|---|---|---|---|---|\n")
	for _, k := range Keys {
		flag := ""
		if k.Flag != "" {
			flag = "`--" + k.Flag + "`"
		}
		def := fmt.Sprint(k.Default)
		if l, ok := k.Default.([]string); ok {
			def = strings.Join(l, ",")
		}
		if def == "" {
			def = "(empty)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | `%s` | %s | %s |\n", k.Name, flag, k.Env(), def, k.Help, k.Zero())
	}
	return b.String()
}

// ExampleFile is the name of the example configuration file at the root
// of the repository, rendered by ExampleYAML.
const ExampleFile = "skillserver.example.yaml"

// ExampleYAML renders Keys as a configuration file to copy: every key,
// commented out at its default, under its help; a test keeps the file
// equal to it, and that every key in it loads.
func ExampleYAML() string {
	var b strings.Builder
	b.WriteString(`# skillserver configuration: every key, commented out at its default.
# Copy this file, uncomment what you change, and pass it with --config
# (or SKILLSERVER_CONFIG). A flag or a SKILLSERVER_* variable overrides
# the file; an unknown key stops the server. docs/configuration.md says
# more of each key. Generated from internal/config.Keys (make golden).
#
`)
	for _, line := range wrap("For every number and duration key, "+Off+".", 74) {
		b.WriteString("# " + line + "\n")
	}
	for _, k := range Keys {
		b.WriteString("\n")
		help := k.Help
		if z := k.Zero(); z != "" {
			help += ". 0: " + z
		}
		for _, line := range wrap(help, 74) {
			b.WriteString("# " + line + "\n")
		}
		fmt.Fprintf(&b, "#%s: %s\n", k.Name, yamlValue(k.Default))
	}
	return b.String()
}

// yamlValue is a default as a YAML value: strings quoted, durations as
// Go writes them (30s), lists in flow style.
func yamlValue(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case time.Duration:
		return v.String()
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// wrap breaks s into lines of at most width bytes at spaces (a longer
// word gets a line of its own).
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}
