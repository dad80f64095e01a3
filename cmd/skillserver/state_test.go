package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/fixture"
)

// TestMain keeps the state_dir ("auto") of every server the tests start
// under a folder of the run, never in the home folder of whoever runs
// them.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "skillserver-cmd-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_STATE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// stateTree is a tree of one archive skill, every file an hour old (past
// the scan cache's doubt about a fresh write).
func stateTree(t *testing.T) (skills, agents string) {
	t.Helper()
	tmp := t.TempDir()
	skills, agents = filepath.Join(tmp, "skills"), filepath.Join(tmp, "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(skills, "deploy", "SKILL.md"), fixture.SkillMD("deploy"))
	mustWrite(t, filepath.Join(skills, "deploy", "scripts", "run.sh"), "#!/bin/sh\necho deploy\n")
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{"deploy/SKILL.md", "deploy/scripts/run.sh"} {
		if err := os.Chtimes(filepath.Join(skills, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	return skills, agents
}

// reloadLine is the first reload log line of ts.
func reloadLine(t *testing.T, ts *testServer) map[string]any {
	t.Helper()
	for _, line := range strings.Split(ts.Logged(t), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "reload" {
			return rec
		}
	}
	t.Fatalf("no reload line in:\n%s", ts.Logged(t))
	return nil
}

func archiveOf(t *testing.T, ts *testServer) (url, digest string) {
	t.Helper()
	idx := ts.Index(t)
	if len(idx.Skills) != 1 {
		t.Fatalf("index lists %d skills, want 1", len(idx.Skills))
	}
	return idx.Skills[0].URL, idx.Skills[0].Digest
}

// TestRestartServesFromTheStateDir: a second process over the same tree
// and state_dir reads no file and builds no archive, and serves the same
// bytes; a blob tampered with on disk is answered 500 (never its wrong
// bytes), counted, and written again by the next reload.
func TestRestartServesFromTheStateDir(t *testing.T) {
	skills, agents := stateTree(t)
	state := filepath.Join(t.TempDir(), "state")
	// No hot cache: every request opens the blob's file, as large ones do.
	args := []string{"--skills", skills, "--agents", agents, "--state-dir", state, "--watch=false", "--blob-cache-max-bytes", "0"}
	env := map[string]string{"SKILLSERVER_ADMIN_TOKEN": adminToken}
	first := startServerEnv(t, env, args...)
	url, digest := archiveOf(t, first)
	_, want := fixture.Get(t, url)
	if fixture.SHA(want) != digest {
		t.Fatalf("archive digest %s, index says %s", fixture.SHA(want), digest)
	}
	first.Stop(t)

	again := startServerEnv(t, env, args...)
	if rec := reloadLine(t, again); rec["files_read"] != 0.0 || rec["archives_built"] != 0.0 {
		t.Errorf("restart: files_read %v, archives_built %v; want 0 and 0", rec["files_read"], rec["archives_built"])
	}
	if !strings.Contains(again.Logged(t), `"msg":"state directory"`) {
		t.Error("the state directory is not logged")
	}
	url, d := archiveOf(t, again) // another port, the same path
	if d != digest {
		t.Errorf("restart serves an archive of digest %s, want %s", d, digest)
	}
	resp, got := fixture.Get(t, url)
	if resp.StatusCode != 200 || !bytes.Equal(got, want) {
		t.Fatalf("restart: GET archive %d, %d bytes; want 200 and the same %d", resp.StatusCode, len(got), len(want))
	}

	// Tamper with the archive's blob: the same length, other bytes.
	hex := strings.TrimPrefix(digest, "sha256:")
	blob := filepath.Join(state, "blobs", "sha256", hex[:2], hex)
	tampered := bytes.ToUpper(want)
	if err := os.Chmod(blob, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blob, tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	os.Chtimes(blob, later, later)
	resp, got = fixture.Get(t, url)
	if resp.StatusCode != http.StatusInternalServerError || bytes.Equal(got, tampered) {
		t.Fatalf("tampered blob: %d with %d bytes; want 500 and none of its bytes", resp.StatusCode, len(got))
	}
	_, metrics := again.Get(t, "/metrics")
	if !strings.Contains(string(metrics), `skillserver_state_blob_faults_total{kind="corrupt"} 1`) {
		t.Error("the corrupt blob is not counted in skillserver_state_blob_faults_total")
	}
	if !strings.Contains(again.Logged(t), "does not match its digest") {
		t.Error("the corrupt blob is not logged")
	}
	postReload(t, again)
	resp, got = fixture.Get(t, url)
	if resp.StatusCode != 200 || !bytes.Equal(got, want) {
		t.Errorf("after a reload: %d, %d bytes; want 200 and the archive again", resp.StatusCode, len(got))
	}
}

// TestStateDirRefusals: an explicit state_dir that cannot be used, or is
// in use by another process, stops the server with an error naming it;
// "auto" falls back to memory, logged, and serves.
func TestStateDirRefusals(t *testing.T) {
	skills, agents := stateTree(t)
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	code := runMain(t.Context(), []string{"serve", "--listen", "127.0.0.1:0", "--skills", skills, "--agents", agents, "--state-dir", notADir},
		func(string) string { return "" }, io.Discard, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "state_dir "+notADir) {
		t.Errorf("state_dir on a file: exit %d, stderr:\n%s", code, stderr.String())
	}

	state := filepath.Join(t.TempDir(), "state")
	args := []string{"--skills", skills, "--agents", agents, "--state-dir", state, "--watch=false"}
	startServer(t, args...)
	stderr.Reset()
	code = runMain(t.Context(), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...),
		func(string) string { return "" }, io.Discard, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "in use by another skillserver process") {
		t.Errorf("a second server on one state_dir: exit %d, stderr:\n%s", code, stderr.String())
	}

	// auto, where the state home is a file: memory, said once.
	t.Setenv("XDG_STATE_HOME", notADir)
	ts := startServer(t, "--skills", skills, "--agents", agents, "--watch=false")
	if n := strings.Count(ts.Logged(t), "the published bytes are held in memory"); n != 1 {
		t.Errorf("auto without a usable folder: the fallback is logged %d times, want once:\n%s", n, ts.Logged(t))
	}
	url, digest := archiveOf(t, ts)
	if _, b := fixture.Get(t, url); fixture.SHA(b) != digest {
		t.Errorf("auto in memory serves an archive of digest %s, want %s", fixture.SHA(b), digest)
	}
}

// TestStartupGC: settling lowers the collector's target to
// settleGCPercent unless GOGC is set in the environment. Restoring puts
// the configured target back.
func TestStartupGC(t *testing.T) {
	for _, tc := range []struct {
		name       string
		configured int
		env        string // GOGC in the environment; "" unset
		set        func() func()
		want       int
	}{
		{"settling lowers the default", 100, "", collectMoreWhileSettling, settleGCPercent},
		{"settling keeps a GOGC set", 100, "100", collectMoreWhileSettling, 100},
		{"settling keeps the collector off", -1, "off", collectMoreWhileSettling, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("GOGC", tc.env)
			} else if v, ok := os.LookupEnv("GOGC"); ok {
				t.Setenv("GOGC", v) // restored after the test
				os.Unsetenv("GOGC")
			}
			orig := debug.SetGCPercent(tc.configured)
			defer debug.SetGCPercent(orig)
			restore := tc.set()
			if got := debug.SetGCPercent(tc.want); got != tc.want {
				t.Errorf("GOGC %d while starting up, want %d", got, tc.want)
			}
			restore()
			restore()
			if got := debug.SetGCPercent(tc.configured); got != tc.configured {
				t.Errorf("GOGC %d after, want the configured %d", got, tc.configured)
			}
		})
	}
}

// TestMemorySettledIsLogged: the server says when the first scan's
// garbage is given back: once ready without the file watch, and after the
// watch's verify (before "file watch ready") with it. Benchmarks measure
// the resident set from there.
func TestMemorySettledIsLogged(t *testing.T) {
	for _, watch := range []bool{false, true} {
		t.Run(fmt.Sprintf("watch=%v", watch), func(t *testing.T) {
			skills := fixture.CopyTree(t, "../../testdata/skills")
			ts := startServer(t, "--skills", skills, fmt.Sprintf("--watch=%v", watch))
			last := `"msg":"memory settled"`
			if watch {
				last = `"msg":"file watch ready"`
			}
			fixture.Eventually(t, 30*time.Second, last, func() error {
				if !strings.Contains(ts.Logged(t), last) {
					return fmt.Errorf("not logged yet")
				}
				return nil
			})
			log := ts.Logged(t)
			settled := strings.Index(log, `"msg":"memory settled","since_ready":`)
			if settled < 0 || settled > strings.Index(log, last) {
				t.Errorf("no memory settled line (by %s) in:\n%s", last, log)
			}
		})
	}
}
