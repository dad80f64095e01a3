//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillserver/skillserver/internal/check"

	"github.com/skillserver/skillserver/internal/fixture"
)

// checkReportSchema is the published shape of `check --format json`.
func checkReportSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	const file = "../api/schemas/check-report.schema.json"
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("check-report.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("check-report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkJSON runs check with --format json and returns the exit code and
// the report, which must match the published schema exactly.
func checkJSON(t *testing.T, args ...string) (int, check.Report) {
	t.Helper()
	code, stdout, stderr := runCheck(t, append([]string{"--format", "json"}, args...)...)
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(stdout))
	if err != nil {
		t.Fatalf("check printed no JSON (exit %d): %v\nstdout:\n%s\nstderr:\n%s", code, err, stdout, stderr)
	}
	if err := checkReportSchema(t).Validate(doc); err != nil {
		t.Fatalf("the report does not match check-report.schema.json: %v\n%s", err, stdout)
	}
	var r check.Report
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("report: %v", err)
	}
	return code, r
}

// findings lists a report's findings as "severity rule item".
func findings(r check.Report) []string {
	out := []string{}
	for _, f := range r.Findings {
		out = append(out, fmt.Sprintf("%s %s %s", f.Severity, f.Rule, f.Item))
	}
	return out
}

// TestCheckOwnServer: our server passes, public and private with either
// form of read token, and a private feed checked without a token fails.
func TestCheckOwnServer(t *testing.T) {
	skills, agents := exampleTree(t)
	public := startServer(t, "--skills", skills, "--agents", agents)
	private, _ := startPrivate(t)
	tests := []struct {
		name           string
		args           []string
		skills, agents int
	}{
		{"public", []string{public.URL}, 5, 2},
		{"bearer token", []string{"--token", fixture.AllSecret, private.URL}, 5, 2},
		{"scoped bearer token", []string{"--token", fixture.TeamSecret, private.URL}, 2, 1},
		{"path token", []string{private.URL + "/t/" + fixture.AllSecret}, 5, 2},
		{"scoped path token", []string{private.URL + "/t/" + fixture.TeamSecret + "/"}, 2, 1},
		{"one at a time", []string{"--concurrency", "1", public.URL}, 5, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, r := checkJSON(t, tt.args...)
			if code != exitOK || !r.OK || len(r.Findings) != 0 {
				t.Fatalf("exit %d, ok %v, findings %q; want 0, true, none", code, r.OK, findings(r))
			}
			s := r.Summary
			if s.Skills != tt.skills || s.Subagents != tt.agents || s.SkillVersions < tt.skills || s.Downloads < tt.skills+tt.agents {
				t.Errorf("summary %+v, want %d skills and %d sub-agents checked", s, tt.skills, tt.agents)
			}
			code, text, _ := runCheck(t, tt.args...)
			if code != exitOK || !strings.Contains(text, "clients will work with this feed") {
				t.Errorf("text report, exit %d:\n%s", code, text)
			}
			if strings.Contains(text, fixture.AllSecret) || strings.Contains(text, fixture.TeamSecret) {
				t.Errorf("the report shows a token:\n%s", text)
			}
			t.Logf("check %s:\n%s", tt.name, text)
		})
	}
	t.Run("private without a token", func(t *testing.T) {
		code, r := checkJSON(t, private.URL)
		want := []string{"error status RFC index", "error status agent card", "error status agent card",
			"error status legacy index", "error status manifest", "error status subagent tree", "error status MCP endpoint"}
		slices.Sort(want)
		got := findings(r)
		slices.Sort(got)
		if code != exitFailure || r.OK || !slices.Equal(got, want) {
			t.Errorf("exit %d, findings %q; want 1 and %q", code, got, want)
		}
	})
}

// TestREADMECheck runs the README's `skillserver check` lines, as
// written, against the example tree (only the address changes): each
// must pass.
func TestREADMECheck(t *testing.T) {
	skills, agents := exampleTree(t)
	ts := startServer(t, "--skills", skills, "--agents", agents)
	for _, line := range fixture.READMEShellLines(t, repoRoot, "skillserver check ") {
		cmdline, _, _ := strings.Cut(line, "#")
		args := strings.Fields(strings.ReplaceAll(cmdline, "http://localhost:8080", ts.URL))[2:]
		if code, stdout, stderr := runCheck(t, args...); code != exitOK {
			t.Errorf("%s: exit %d\n%s%s", line, code, stdout, stderr)
		}
	}
}

// runCheck runs `skillserver check args...` as a process.
func runCheck(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runSkillserver(t, append([]string{"check"}, args...)...)
}
