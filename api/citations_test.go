package api

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outsideDoc matches the names of the steering documents the project was
// designed from. They are not in this repository, so nothing here may cite
// them: the repository's own docs/ are what users and contributors read.
var outsideDoc = regexp.MustCompile(`\b(wire|source|cli|clients|STYLE)\.md\b`)

// TestNothingCitesOutsideDocuments: the OpenAPI file, the schemas, the
// docs and the code name sections of docs/, never documents the
// repository does not contain.
func TestNothingCitesOutsideDocuments(t *testing.T) {
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "bin" || name == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".yaml", ".yml", ".json":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := outsideDoc.FindString(line); m != "" {
				t.Errorf("%s:%d cites %s, which this repository does not contain; point to docs/ instead", path, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
