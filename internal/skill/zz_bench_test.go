package skill

import (
	"bytes"
	"os"
	"testing"

	"go.yaml.in/yaml/v3"
)

func BenchmarkZZParseSkill(b *testing.B) {
	data, _ := os.ReadFile(os.Getenv("ZZ_FILE"))
	for b.Loop() {
		ParseSkill("x/SKILL.md", "file-niowioflind-9870", data)
	}
}

func BenchmarkZZYamlNode(b *testing.B) {
	data, _ := os.ReadFile(os.Getenv("ZZ_FILE"))
	end := blockEnd(data)
	fm := data[4 : end-4]
	for b.Loop() {
		var n yaml.Node
		yaml.Unmarshal(fm, &n)
	}
}

func BenchmarkZZFrontmatter(b *testing.B) {
	data, _ := os.ReadFile(os.Getenv("ZZ_FILE"))
	for b.Loop() {
		parseFrontmatter(data)
	}
	_ = bytes.NewReader
}
