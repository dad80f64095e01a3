package config

import (
	"fmt"
	"strings"
)

// MarkdownTable renders Keys as the table in docs/configuration.md; a test
// keeps the two equal.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| key | flag | environment | default | meaning |\n|---|---|---|---|---|\n")
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
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | `%s` | %s |\n", k.Name, flag, k.Env(), def, k.Help)
	}
	return b.String()
}
