package api_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// ajv is the JSON Schema validator most JavaScript clients use; its strict
// mode refuses schemas that other validators accept silently (a
// `properties` or `pattern` without the `type` it applies to, a `required`
// name no `properties` declares, an unknown format). Pinned versions, run
// through npx.
var ajvCommand = []string{"-y", "-p", "ajv-cli@5.0.0", "-p", "ajv-formats@3.0.1", "--", "ajv", "compile",
	"--spec=draft2020", "-c", "ajv-formats"}

// legacyTupleError is the one strict-mode rule a schema breaks on purpose:
// the legacy index's files list has SKILL.md first and any resources after
// it, an open tuple (prefixItems with items), which ajv's strictTuples
// refuses because it cannot tell an open tuple from a forgotten bound.
// JSON Schema has no other way to say "the first item is".
const legacyTupleError = `error: strict mode: "prefixItems" is 1-tuple, but minItems or maxItems/items are not specified or different at path "#/properties/files"`

// TestSchemasCompileUnderAjvStrict compiles every schema with ajv
// --strict=true (the legacy index's open tuple aside, which is compiled
// again with only strictTuples off). Needs npx; runs with
// SKILLSERVER_INTEROP=1, as `make test` does.
func TestSchemasCompileUnderAjvStrict(t *testing.T) {
	npx := requireNpx(t, "ajv")
	files, err := filepath.Glob(filepath.Join(schemaDir, "*.schema.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas: %v", err)
	}
	args := append([]string{}, ajvCommand...)
	args = append(args, "--strict=true")
	var common string
	for _, f := range files {
		if sharedSchemas[kindOf(f)] {
			common = f
			continue
		}
		args = append(args, "-s", f)
	}
	// The shared schema is compiled on its own too, not only as a reference.
	args = append(args, "-r", common)
	out := ajv(t, npx, args...)
	ownOut := ajv(t, npx, append(append([]string{}, ajvCommand...), "--strict=true", "-s", common)...)
	out += ownOut

	valid := regexp.MustCompile(`(?m)^schema (\S+) is valid$`)
	got := map[string]bool{}
	for _, m := range valid.FindAllStringSubmatch(out, -1) {
		got[m[1]] = true
	}
	for _, f := range files {
		if got[f] {
			continue
		}
		if kindOf(f) == "legacy-index" && strings.Contains(out, legacyTupleError) {
			again := ajv(t, npx, append(append([]string{}, ajvCommand...), "--strict=true", "--strict-tuples=false", "-s", f, "-r", common)...)
			if strings.Contains(again, "schema "+f+" is valid") {
				continue
			}
			out += again
		}
		t.Errorf("%s does not compile under ajv --strict=true", f)
	}
	if t.Failed() {
		t.Logf("ajv printed:\n%s", out)
	}
}

// requireNpx skips the test unless SKILLSERVER_INTEROP=1, and returns
// npx, which runs tool.
func requireNpx(t *testing.T, tool string) string {
	t.Helper()
	if os.Getenv("SKILLSERVER_INTEROP") != "1" {
		t.Skip("runs " + tool + " through npx; enable with SKILLSERVER_INTEROP=1 (make test does)")
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Fatalf("SKILLSERVER_INTEROP=1 but npx is not on PATH: %v", err)
	}
	return npx
}

func kindOf(file string) string {
	return strings.TrimSuffix(filepath.Base(file), ".schema.json")
}

// ajv runs npx with args and returns its combined output; a failing exit
// is expected when a schema is invalid, and the output says which.
func ajv(t *testing.T, npx string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npx, args...)
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_fund=false")
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("npx %s: %v\n%s", strings.Join(args, " "), ctx.Err(), out)
	}
	t.Logf("npx %s: %v", strings.Join(args[:6], " "), err)
	return string(out)
}
