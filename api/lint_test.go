package api_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// spectralCommand lints OpenAPI descriptions with Spectral's built-in
// OpenAPI rules; pinned, run through npx.
var spectralCommand = []string{"-y", "@stoplight/spectral-cli@6.15.0", "lint", "--format", "json", "--quiet"}

// expectedLint are the findings kept on purpose. MethodNotAllowed is the
// 405 every path answers for a method it does not document: OpenAPI has
// no place for "any other method", so no operation names it, and
// TestOpenAPIOperationsAnswer checks the answers against it.
var expectedLint = []string{"oas3-unused-component components.responses.MethodNotAllowed"}

// TestOpenAPILint runs Spectral's OpenAPI rules (spectral:oas) on
// openapi.yaml: no errors, and no warnings beyond expectedLint. Needs
// npx; runs with SKILLSERVER_INTEROP=1, as `make test` does.
func TestOpenAPILint(t *testing.T) {
	npx := requireNpx(t, "Spectral")
	spec, err := filepath.Abs(openAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ruleset := filepath.Join(dir, ".spectral.yaml")
	if err := os.WriteFile(ruleset, []byte("extends: [\"spectral:oas\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, spectralCommand...), "--ruleset", ruleset, "--fail-severity", "error", spec)
	out := ajv(t, npx, args...) // the same npx runner as the ajv test
	start := strings.Index(out, "[")
	var findings []struct {
		Code     string   `json:"code"`
		Path     []string `json:"path"`
		Severity int      `json:"severity"` // 0 error, 1 warning, 2 information, 3 hint
		Message  string   `json:"message"`
	}
	if start < 0 || json.Unmarshal([]byte(out[start:]), &findings) != nil {
		t.Fatalf("spectral printed no JSON findings:\n%s", out)
	}
	var unexpected []string
	for _, f := range findings {
		if f.Severity > 1 {
			continue
		}
		got := f.Code + " " + strings.Join(f.Path, ".")
		if !slices.Contains(expectedLint, got) {
			unexpected = append(unexpected, fmt.Sprintf("%s (severity %d): %s", got, f.Severity, f.Message))
		}
	}
	if len(unexpected) > 0 {
		t.Errorf("spectral:oas findings in %s:\n%s", openAPIFile, strings.Join(unexpected, "\n"))
	}
}
