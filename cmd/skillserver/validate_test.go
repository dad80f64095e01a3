package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCmd(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := runMain(t.Context(), args, func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestValidate(t *testing.T) {
	skills, agents := exampleTree(t)
	invalid, err := filepath.Abs("../../testdata/invalid/skills")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		code     int
		stdout   string // substring
		emptyOut bool
	}{
		{"clean tree", []string{"validate", "--skills", skills, "--agents", agents}, nil, 0, "", true},
		{"invalid tree", []string{"validate", "--skills", invalid}, nil, 1, invalid + "/name-mismatch/SKILL.md: name-mismatch: ", false},
		{"warning marked", []string{"validate", "--skills", invalid}, nil, 1, invalid + "/unknown-key/SKILL.md: unknown-key: warning: ", false},
		{"skills from env", []string{"validate"}, map[string]string{"SKILLSERVER_SKILLS": invalid}, 1, "no-frontmatter", false},
		{"bad format", []string{"validate", "--skills", skills, "--format", "xml"}, nil, 2, "", true},
		{"unknown flag", []string{"validate", "--nope"}, nil, 2, "", true},
		{"missing explicit dir", []string{"validate", "--skills", filepath.Join(t.TempDir(), "missing")}, nil, 2, "", true},
		{"unknown command", []string{"frobnicate"}, nil, 2, "", true},
		{"no command", nil, nil, 2, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, tt.env, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, errOut)
			}
			if tt.emptyOut && out != "" {
				t.Errorf("stdout = %q, want empty", out)
			}
			if !strings.Contains(out, tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, out)
			}
		})
	}
}

func TestValidateJSON(t *testing.T) {
	invalid, _ := filepath.Abs("../../testdata/invalid/skills")
	code, out, _ := runCmd(t, nil, "validate", "--skills", invalid, "--format", "json")
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	var problems []struct{ Path, Rule, Severity, Message string }
	if err := json.Unmarshal([]byte(out), &problems); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, out)
	}
	if len(problems) < 20 {
		t.Errorf("%d problems, want one per invalid fixture", len(problems))
	}
	for _, p := range problems {
		if p.Path == "" || p.Rule == "" || (p.Severity != "error" && p.Severity != "warning") || p.Message == "" {
			t.Errorf("incomplete problem %+v", p)
		}
	}
	skills, agents := exampleTree(t)
	code, out, _ = runCmd(t, nil, "validate", "--skills", skills, "--agents", agents, "--format", "json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("clean tree: exit %d, output %q", code, out)
	}
}

// TestServeRejectsMissingExplicitDir: a directory given explicitly that
// does not exist is a startup error; a missing default one is not.
func TestServeRejectsMissingExplicitDir(t *testing.T) {
	code, _, errOut := runCmd(t, nil, "serve", "--listen", "127.0.0.1:0", "--skills", filepath.Join(t.TempDir(), "missing"))
	if code != 2 || !strings.Contains(errOut, "does not exist") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestHealthcheck(t *testing.T) {
	skills, _ := exampleTree(t)
	ts := startServer(t, "--skills", skills)
	_, port, _ := strings.Cut(strings.TrimPrefix(ts.URL, "http://"), ":")
	if code, _, errOut := runCmd(t, nil, "healthcheck", "--url", ts.URL+"/readyz"); code != 0 {
		t.Errorf("--url: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCmd(t, map[string]string{"SKILLSERVER_LISTEN": "127.0.0.1:" + port}, "healthcheck"); code != 0 {
		t.Errorf("listen from the environment: exit %d: %s", code, errOut)
	}
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(cfg, []byte("listen: \":"+port+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCmd(t, nil, "healthcheck", "--config", cfg); code != 0 {
		t.Errorf("listen from the config file: exit %d: %s", code, errOut)
	}
	if code, _, _ := runCmd(t, nil, "healthcheck", "--url", ts.URL+"/nope"); code != 1 {
		t.Errorf("a 404 is unhealthy: exit %d, want 1", code)
	}
}

// -h and --help print the command's help to stdout and exit 0; they
// printed "usage error: pflag: help requested" and exited 2. The help
// names every flag with its type.
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{"serve", "--help"}, {"validate", "-h"}, {"healthcheck", "--help"}} {
		var stdout, stderr bytes.Buffer
		code := runMain(t.Context(), args, func(string) string { return "" }, &stdout, &stderr)
		if code != exitOK || stderr.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 0 and nothing", args, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "Usage:\n  skillserver "+args[0]+" [flags]") || !strings.Contains(stdout.String(), "--config string") {
			t.Errorf("%v: stdout %q is not the usage", args, stdout.String())
		}
	}
}
