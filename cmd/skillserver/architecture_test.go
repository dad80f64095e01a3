package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestArchitectureImportGraph: the import graph docs/architecture.md
// draws is the one the code has. Each line of its block names a package
// (cmd/skillserver, internal/x, api) and the packages of this module it
// imports, outside tests; "a, b -> no internal package" names those that
// import none. A package the code has and the block leaves out, an
// import it names that the code lacks or the other way round, fails.
func TestArchitectureImportGraph(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	const intro = "The actual import graph"
	i := strings.Index(string(doc), intro)
	if i < 0 {
		t.Fatalf("docs/architecture.md has no %q block", intro)
	}
	block := string(doc[i:])
	start := strings.Index(block, "```\n") + 4
	end := start + strings.Index(block[start:], "```")
	drawn := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(block[start:end]), "\n") {
		from, to, ok := strings.Cut(line, "->")
		if !ok {
			t.Fatalf("docs/architecture.md: %q is not \"package -> imports\"", line)
		}
		var imports []string
		if to = strings.TrimSpace(to); to != "no internal package" {
			for _, p := range strings.Split(to, ",") {
				imports = append(imports, strings.TrimSpace(p))
			}
		}
		slices.Sort(imports)
		for _, p := range strings.Split(from, ",") {
			drawn[short(strings.TrimSpace(p))] = imports
		}
	}

	const module = "github.com/skillserver/skillserver/"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	actual := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, ok := strings.CutPrefix(f[0], module)
		if !ok || strings.HasPrefix(pkg, "scripts/") {
			continue // the benchmark and soak commands are not the product
		}
		imports := []string{}
		for _, imp := range f[1:] {
			if p, ok := strings.CutPrefix(imp, module); ok {
				imports = append(imports, short(p))
			}
		}
		slices.Sort(imports)
		actual[short(pkg)] = imports
	}
	for pkg, imports := range actual {
		d, ok := drawn[pkg]
		switch {
		case !ok:
			t.Errorf("docs/architecture.md does not draw %s (it imports %s)", pkg, orNone(imports))
		case !slices.Equal(d, imports):
			t.Errorf("docs/architecture.md: %s -> %s; the code: %s", pkg, orNone(d), orNone(imports))
		}
	}
	for pkg := range drawn {
		if _, ok := actual[pkg]; !ok {
			t.Errorf("docs/architecture.md draws %s, which is no package of the module", pkg)
		}
	}
}

// short is a package's name in the drawing: internal/x as x.
func short(pkg string) string { return strings.TrimPrefix(pkg, "internal/") }

func orNone(imports []string) string {
	if len(imports) == 0 {
		return "no internal package"
	}
	return strings.Join(imports, ", ")
}
