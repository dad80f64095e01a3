package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/export"
	"github.com/skillserver/skillserver/internal/fixture"
)

// runExport runs `skillserver export` with args and fails the test unless
// it exits 0.
func runExport(t *testing.T, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	if code := runMain(t.Context(), append([]string{"export"}, args...), func(string) string { return "" }, io.Discard, &stderr); code != 0 {
		t.Fatalf("export %q exited %d:\n%s", args, code, stderr.String())
	}
	return stderr.String()
}

func TestExportUsage(t *testing.T) {
	skills, agents := exampleTree(t)
	for _, tt := range []struct {
		name    string
		args    []string
		message string
	}{
		{"no base URL", []string{"--out", t.TempDir()}, "--base-url is required"},
		{"no output", []string{"--base-url", "https://skills.example.com"}, "--out is required"},
		{"bad api URL", []string{"--base-url", "https://skills.example.com", "--out", t.TempDir(), "--api-url", "ftp://x"}, "export_api_url"},
		{"negative prune", []string{"--base-url", "https://skills.example.com", "--out", t.TempDir(), "--prune-older-than", "-1h"}, "export_prune_older_than"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCmd(t, nil, append([]string{"export", "--skills", skills, "--agents", agents}, tt.args...)...)
			if code != exitUsage || !strings.Contains(errOut, tt.message) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tt.message)
			}
		})
	}
}

// TestREADMEExport runs README's export lines: the folder one as written
// (in a folder holding the example tree as ./skills and ./agents), the
// bucket one with its s3:// URL swapped for a file:// bucket, since the
// README's bucket does not exist.
func TestREADMEExport(t *testing.T) {
	skills, agents := exampleTree(t)
	lines := fixture.READMEShellLines(t, "../..", "skillserver export ")
	cwd := t.TempDir()
	t.Chdir(cwd)
	fixture.Symlink(t, skills, filepath.Join(cwd, "skills"))
	fixture.Symlink(t, agents, filepath.Join(cwd, "agents"))
	bucket := filepath.Join(cwd, "bucket")
	if err := os.Mkdir(bucket, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, line := range lines {
		line = regexp.MustCompile(`'s3://[^']*'`).ReplaceAllString(line, "file://"+bucket)
		runExport(t, strings.Fields(line)[2:]...)
	}
	for _, dir := range []string{filepath.Join(cwd, "public"), bucket} {
		if _, err := os.Stat(filepath.Join(dir, ".well-known", "agent-skills", "index.json")); err != nil {
			t.Errorf("after README's export lines: %v", err)
		}
	}
}

// A file name that passes the file system of the tree can still be one an
// export cannot store: 255 bytes, the most a name may have there, is more
// than the names the export's targets write for it (the file:// driver's
// temporary file adds 21 bytes; the folder's used to add 5), and a path
// whose longest exported key is over 1,024 bytes is more than S3, GCS or
// Azure take. Each is a problem of its own skill, which validate names
// and serve and export leave out; the other skills are exported. Before,
// validate passed such a tree and export stopped at the file, exit 1, with
// no index written.
func TestExportLongFileName(t *testing.T) {
	skills := t.TempDir()
	mustWrite(t, filepath.Join(skills, "good", "SKILL.md"), fixture.SkillDoc("good", "version: 1.0.0\n"))
	mustWrite(t, filepath.Join(skills, "good", "notes.md"), "notes\n")
	long := strings.Repeat("n", 252) + ".md" // 255 bytes
	mustWrite(t, filepath.Join(skills, "long-name", "SKILL.md"), fixture.SkillDoc("long-name", "version: 1.0.0\n"))
	mustWrite(t, filepath.Join(skills, "long-name", long), "long name\n")
	// Five folders of 200 bytes: every name fits, the key does not.
	deep := strings.Repeat(strings.Repeat("d", 200)+"/", 5) + "x.md"
	mustWrite(t, filepath.Join(skills, "long-key", "SKILL.md"), fixture.SkillDoc("long-key", "version: 1.0.0\n"))
	mustWrite(t, filepath.Join(skills, "long-key", filepath.FromSlash(deep)), "deep\n")

	code, out, errOut := runCmd(t, nil, "validate", "--skills", skills)
	if code != exitFailure {
		t.Errorf("validate exited %d; want %d for the two skills:\n%s%s", code, exitFailure, out, errOut)
	}
	for _, want := range []string{"long-name/" + long + ": resource-path: ", "long-key/" + deep + ": resource-path: "} {
		if !strings.Contains(out, want) {
			t.Errorf("validate does not name %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "good/") {
		t.Errorf("validate reports the good skill:\n%s", out)
	}

	base := "https://skills.example.com"
	for _, out := range []string{t.TempDir(), "file://" + filepath.ToSlash(t.TempDir())} {
		code, _, errOut := runCmd(t, nil, "export", "--skills", skills, "--base-url", base, "--out", out)
		if code != exitOK || !strings.Contains(errOut, "exported 1 skills") || !strings.Contains(errOut, "2 errors in the tree") {
			t.Errorf("export to %s exited %d; want 0, the good skill exported and the two others left out:\n%s", out, code, errOut)
		}
		idx, err := os.ReadFile(filepath.Join(strings.TrimPrefix(out, "file://"), ".well-known", "agent-skills", "index.json"))
		if err != nil || !bytes.Contains(idx, []byte(`"good"`)) || bytes.Contains(idx, []byte(`"long-`)) {
			t.Errorf("the index of the export to %s (%v); want the good skill only:\n%s", out, err, idx)
		}
	}
}

// Pruning never follows a symbolic link out of --out: an exported
// folder a link to outside has replaced (by whoever can write there)
// is not pruned through, the state file forgets the keys below it with a
// warning, and the export goes on, exit 0, as does the next. Before, the
// file:// bucket deleted the file behind the link, and the folder target
// refused to and failed, on every run until the state file was edited by
// hand.
func TestExportPruneDoesNotFollowLinks(t *testing.T) {
	for _, bucket := range []bool{false, true} {
		name := "folder"
		if bucket {
			name = "file:// bucket"
		}
		t.Run(name, func(t *testing.T) {
			skills := t.TempDir()
			for _, n := range []string{"alpha", "gone"} {
				mustWrite(t, filepath.Join(skills, n, "SKILL.md"), fixture.SkillDoc(n, "version: 1.0.0\n"))
			}
			dir := t.TempDir()
			out := dir
			if bucket {
				out = "file://" + filepath.ToSlash(dir)
			}
			base := "https://skills.example.com"
			runExport(t, "--skills", skills, "--base-url", base, "--out", out)
			if err := os.RemoveAll(filepath.Join(skills, "gone")); err != nil {
				t.Fatal(err)
			}
			runExport(t, "--skills", skills, "--base-url", base, "--out", out)

			// The removed skill's folder becomes a link to a folder outside
			// --out holding a file at the key pruning will remove.
			const key = "skill/gone/.well-known/agent-skills/index.json"
			outside := t.TempDir()
			precious := filepath.Join(outside, ".well-known", "agent-skills", "index.json")
			mustWrite(t, precious, "not the export's\n")
			if err := os.RemoveAll(filepath.Join(dir, "skill", "gone")); err != nil {
				t.Fatal(err)
			}
			fixture.Symlink(t, outside, filepath.Join(dir, "skill", "gone"))
			// And an unnamed artifact becomes a link to a file outside.
			var st struct {
				Keys    []string          `json:"keys"`
				Unnamed map[string]string `json:"unnamed_since"`
			}
			statePath := filepath.Join(dir, export.StateFile)
			if err := json.Unmarshal(readBytes(t, statePath), &st); err != nil {
				t.Fatal(err)
			}
			if _, ok := st.Unnamed[key]; !ok {
				t.Fatalf("the state file does not record %s as unnamed: %v", key, st.Unnamed)
			}
			var artifact string
			for k := range st.Unnamed {
				if strings.HasPrefix(k, "api/v1/blobs/") {
					artifact = k
				}
			}
			if artifact == "" {
				t.Fatalf("no unnamed artifact in %v", st.Unnamed)
			}
			alsoPrecious := filepath.Join(outside, "artifact")
			mustWrite(t, alsoPrecious, "not the export's either\n")
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(artifact))); err != nil {
				t.Fatal(err)
			}
			fixture.Symlink(t, alsoPrecious, filepath.Join(dir, filepath.FromSlash(artifact)))
			for k := range st.Unnamed {
				st.Unnamed[k] = time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)
			}
			raw, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			mustWrite(t, statePath, string(raw))

			errOut := runExport(t, "--skills", skills, "--base-url", base, "--out", out, "--prune-older-than", "1h")
			for _, p := range []string{precious, alsoPrecious} {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("the prune removed %s, outside --out: %v", p, err)
				}
			}
			for _, k := range []string{key, artifact} {
				if !strings.Contains(errOut, "warning: ") || !strings.Contains(errOut, k) {
					t.Errorf("the prune does not warn of %s:\n%s", k, errOut)
				}
			}
			if !strings.Contains(errOut, "0 kept unnamed") {
				t.Errorf("the prune kept keys unnamed: %s", errOut)
			}
			if state := readBytes(t, statePath); bytes.Contains(state, []byte(key)) || bytes.Contains(state, []byte(artifact)) {
				t.Errorf("the state file still names the linked keys:\n%s", state)
			}
			again := runExport(t, "--skills", skills, "--base-url", base, "--out", out, "--prune-older-than", "1h")
			if strings.Contains(again, "warning") || !strings.Contains(again, "0 written") {
				t.Errorf("the next export: %s; want no warning and nothing written", again)
			}
		})
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
