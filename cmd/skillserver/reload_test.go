package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/check"
	"github.com/skillserver/skillserver/internal/fixture"
)

const adminToken = "test-admin-token"

// postReload asks ts to rescan through POST /-/reload with adminToken.
func postReload(t *testing.T, ts *testServer) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL+"/-/reload", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reload: status %d", resp.StatusCode)
	}
}

func mustWrite(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSyncWhileTheTreeChanges runs clients that sync the way netclaw and
// the skills CLI do, from fresh state every pass, while the tree changes
// and reloads fire (the file watch, and POST /-/reload). Every fetch must
// succeed and every digest verify; afterwards the feeds must match the
// tree exactly.
func TestSyncWhileTheTreeChanges(t *testing.T) {
	skills := fixture.CopyTree(t, "../../testdata/skills")
	agents := fixture.CopyTree(t, "../../testdata/agents")
	ts := startServerEnv(t, map[string]string{"SKILLSERVER_ADMIN_TOKEN": adminToken},
		"--skills", skills, "--agents", agents, "--watch-debounce", "5ms")

	var stop atomic.Bool
	var passes, skipped atomic.Int64
	var mu sync.Mutex
	var failures []string
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				c := check.New(ts.URL)
				c.Strict = false
				rfc, err := c.SyncSkills(t.Context())
				if err == nil {
					err = c.SyncAgents(t.Context())
				}
				if err == nil {
					err = c.WalkManifest(t.Context(), rfc)
				}
				skipped.Add(int64(c.Skipped))
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
				}
				passes.Add(1)
			}
		}()
	}

	mutations := []func(i int){
		func(i int) { // add a skill with a resource, and an agent
			mustWrite(t, filepath.Join(skills, fmt.Sprintf("added-%d", i), "SKILL.md"), fixture.SkillDoc(fmt.Sprintf("added-%d", i), ""))
			mustWrite(t, filepath.Join(skills, fmt.Sprintf("added-%d", i), "notes", "n.md"), fmt.Sprintf("note %d\n", i))
			mustWrite(t, filepath.Join(agents, fmt.Sprintf("agent-%d.md", i)), fixture.AgentDoc(fmt.Sprintf("agent-%d", i), ""))
		},
		func(i int) { // edit a declared version in place
			mustWrite(t, filepath.Join(skills, "code-review", "references", "checklist.md"), fmt.Sprintf("# Checklist, edit %d\n", i))
		},
		func(i int) { // edit an undeclared version (it becomes a new version)
			mustWrite(t, filepath.Join(skills, "windows-notes", "SKILL.md"), "---\r\nname: windows-notes\r\ndescription: Windows notes.\r\n---\r\n\r\nEdit "+fmt.Sprint(i)+"\r\n")
			mustWrite(t, filepath.Join(agents, "changelog-reviewer.md"), fixture.AgentDoc("changelog-reviewer", "")+fmt.Sprintf("Edit %d.\n", i))
		},
		func(i int) { // new versions
			mustWrite(t, filepath.Join(skills, "k8s-deploy", fmt.Sprintf("1.3.%d", i), "SKILL.md"), fixture.SkillDoc("k8s-deploy", ""))
			mustWrite(t, filepath.Join(agents, "technical-support-diagnostician", fmt.Sprintf("1.1.%d.md", i)), fixture.AgentDoc("technical-support-diagnostician", ""))
		},
		func(i int) { // a broken half-save over a valid skill and agent, then the fix
			good := fixture.SkillDoc("release-notes", fmt.Sprintf("metadata:\n  version: 0.3.%d\n", i+2))
			mustWrite(t, filepath.Join(skills, "release-notes", "SKILL.md"), good[:len(good)/3])
			mustWrite(t, filepath.Join(agents, "changelog-reviewer.md"), "---\nname: changelog-rev")
			postReload(t, ts)
			mustWrite(t, filepath.Join(skills, "release-notes", "SKILL.md"), good)
			mustWrite(t, filepath.Join(agents, "changelog-reviewer.md"), fixture.AgentDoc("changelog-reviewer", ""))
		},
		func(i int) { // remove what an earlier round added
			if i < 6 {
				return
			}
			os.RemoveAll(filepath.Join(skills, fmt.Sprintf("added-%d", i-6)))
			os.Remove(filepath.Join(agents, fmt.Sprintf("agent-%d.md", i-6)))
		},
	}
	const rounds = 48
	for i := range rounds {
		mutations[i%len(mutations)](i)
		if i%2 == 0 {
			postReload(t, ts) // otherwise the file watch picks it up
		}
	}
	postReload(t, ts)
	stop.Store(true)
	wg.Wait()

	if len(failures) > 0 {
		t.Errorf("%d of %d passes failed; first: %s", len(failures), passes.Load(), failures[0])
	}
	t.Logf("%d passes by 3 clients over %d rounds of changes; %d items skipped by a reload between page and identity", passes.Load(), rounds, skipped.Load())

	// The end state: a strict walk agrees with the tree.
	c := check.New(ts.URL)
	rfc, err := c.SyncSkills(t.Context())
	if err == nil {
		err = c.SyncAgents(t.Context())
	}
	if err == nil {
		err = c.WalkManifest(t.Context(), rfc)
	}
	if err != nil {
		t.Fatalf("final strict pass: %v", err)
	}
	var want []string
	entries, _ := os.ReadDir(skills)
	for _, e := range entries {
		if e.IsDir() {
			want = append(want, e.Name())
		}
	}
	var got []string
	for _, e := range rfc {
		got = append(got, e.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("final skills %v, want the tree's %v", got, want)
	}
	lastAdded := (rounds - 1) - (rounds-1-3)%len(mutations) // the last round that ran mutations[3]
	if v := c.Skills["k8s-deploy"].Version; v != fmt.Sprintf("1.3.%d", lastAdded) {
		t.Errorf("k8s-deploy latest = %s, want the newest added version", v)
	}
	disk, _ := os.ReadFile(filepath.Join(skills, "release-notes", "SKILL.md"))
	if !bytes.Equal(c.Skills["release-notes"].Files["SKILL.md"], disk) {
		t.Error("release-notes does not serve the fixed file")
	}
	wantAgents := 0
	agentEntries, _ := os.ReadDir(agents)
	for _, e := range agentEntries {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".md") {
			wantAgents++
		}
	}
	if len(c.Agents) != wantAgents {
		t.Errorf("final agents %d, want %d", len(c.Agents), wantAgents)
	}
}

// TestSIGHUPReloads: with the file watch off, SIGHUP is what publishes a
// change.
func TestSIGHUPReloads(t *testing.T) {
	skills := fixture.CopyTree(t, "../../testdata/skills")
	ts := startServer(t, "--skills", skills, "--watch=false")
	mustWrite(t, filepath.Join(skills, "hup-skill", "SKILL.md"), fixture.SkillDoc("hup-skill", ""))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	fixture.Eventually(t, 20*time.Second, "SIGHUP publishes the new skill", func() error {
		if r, body := ts.Get(t, "/api/v1/skills/hup-skill"); r.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("hup-skill")) {
			return fmt.Errorf("status %d", r.StatusCode)
		}
		return nil
	})
}

// TestWatchPublishesChanges: with the watch on (the default), a new skill
// appears without any signal or request.
func TestWatchPublishesChanges(t *testing.T) {
	skills := fixture.CopyTree(t, "../../testdata/skills")
	ts := startServer(t, "--skills", skills, "--watch-debounce", "10ms")
	mustWrite(t, filepath.Join(skills, "watched", "SKILL.md"), fixture.SkillDoc("watched", ""))
	waitForSkill(t, ts, "watched", "the file watch")
}

// TestWatchFollowsLinks: a skill that publishes a file through a symlink
// is republished when that file changes, whether the file lives in
// another skill or in a hidden folder of the root, through the file watch
// alone.
func TestWatchFollowsLinks(t *testing.T) {
	skills := t.TempDir()
	mustWrite(t, filepath.Join(skills, "shared", "SKILL.md"), fixture.SkillDoc("shared", ""))
	mustWrite(t, filepath.Join(skills, "shared", "common.md"), "common v1\n")
	mustWrite(t, filepath.Join(skills, ".team", "style.md"), "style v1\n")
	mustWrite(t, filepath.Join(skills, "user", "SKILL.md"), fixture.SkillDoc("user", ""))
	for link, target := range map[string]string{"common.md": "../shared/common.md", "style.md": "../.team/style.md"} {
		if err := os.Symlink(target, filepath.Join(skills, "user", link)); err != nil {
			t.Fatal(err)
		}
	}
	ts := startServer(t, "--skills", skills, "--watch-debounce", "10ms")
	for _, c := range []struct{ file, path, want string }{
		{filepath.Join(skills, "shared", "common.md"), "common.md", "common v2\n"},
		{filepath.Join(skills, ".team", "style.md"), "style.md", "style v2\n"},
	} {
		mustWrite(t, c.file, c.want)
		fixture.Eventually(t, 20*time.Second, "user/"+c.path+" follows its link target", func() error {
			if resp, body := ts.Get(t, "/.well-known/skills/user/"+c.path); resp.StatusCode != http.StatusOK || string(body) != c.want {
				return fmt.Errorf("still serves %q (%d)", body, resp.StatusCode)
			}
			return nil
		})
	}
}

// waitForSkill waits until name is published, for at most 20s.
func waitForSkill(t *testing.T, ts *testServer, name, why string) {
	t.Helper()
	fixture.Eventually(t, 20*time.Second, why+" publishes skill "+name, func() error {
		if r, _ := ts.Get(t, "/api/v1/skills/"+name); r.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", r.StatusCode)
		}
		return nil
	})
}

// TestWatchSurvivesARecreatedRoot: `rm -rf skills && cp -r new skills`
// replaces every watched folder; the watch must follow on its own.
func TestWatchSurvivesARecreatedRoot(t *testing.T) {
	skills := filepath.Join(t.TempDir(), "skills")
	mustWrite(t, filepath.Join(skills, "before", "SKILL.md"), fixture.SkillDoc("before", ""))
	ts := startServer(t, "--skills", skills, "--watch-debounce", "10ms")
	fresh := fixture.CopyTree(t, "../../testdata/skills")
	mustWrite(t, filepath.Join(fresh, "recreated", "SKILL.md"), fixture.SkillDoc("recreated", ""))
	if err := os.RemoveAll(skills); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fresh, skills); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Log(ts.Logged(t))
		}
	}()
	waitForSkill(t, ts, "recreated", "after the root was re-created")
	mustWrite(t, filepath.Join(skills, "later", "SKILL.md"), fixture.SkillDoc("later", ""))
	waitForSkill(t, ts, "later", "a skill added to the re-created root")
}

// TestSIGHUPResumesTheWatch: when the folder holding the root is deleted
// too, nothing is left to watch; SIGHUP reloads and resumes the watch.
func TestSIGHUPResumesTheWatch(t *testing.T) {
	holder := filepath.Join(t.TempDir(), "holder")
	skills := filepath.Join(holder, "skills")
	mustWrite(t, filepath.Join(skills, "before", "SKILL.md"), fixture.SkillDoc("before", ""))
	ts := startServer(t, "--skills", skills, "--watch-debounce", "10ms")
	if err := os.RemoveAll(holder); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(skills, "after-hup", "SKILL.md"), fixture.SkillDoc("after-hup", ""))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitForSkill(t, ts, "after-hup", "SIGHUP after the root came back")
	mustWrite(t, filepath.Join(skills, "watched-again", "SKILL.md"), fixture.SkillDoc("watched-again", ""))
	waitForSkill(t, ts, "watched-again", "a skill added after SIGHUP, with the watch alone")
}

// TestWatchPublishesUnderChurn: a file rewritten every 60ms never leaves
// the tree quiet for watch_debounce; watch_max_wait (default 2s) still
// publishes a new skill while the churn goes on.
func TestWatchPublishesUnderChurn(t *testing.T) {
	skills := fixture.CopyTree(t, "../../testdata/skills")
	ts := startServer(t, "--skills", skills)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(60 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			if err := os.WriteFile(filepath.Join(skills, ".cache"), []byte(fmt.Sprint(i)), 0o644); err != nil {
				t.Error(err)
				return
			}
			select {
			case <-tick.C:
			case <-stop:
				return
			}
		}
	}()
	defer func() { close(stop); <-stopped }()
	mustWrite(t, filepath.Join(skills, "churned", "SKILL.md"), fixture.SkillDoc("churned", ""))
	start := time.Now()
	waitForSkill(t, ts, "churned", "a new skill while a file is rewritten every 60ms")
	t.Logf("published %s after it was written, under churn", time.Since(start).Round(10*time.Millisecond))
}

// TestReloadWatchdogMetrics: the series the stuck-reload alert uses exist
// from the start, and the first scan counts as a successful reload. (No
// watch: once one is set up, it verifies the tree, a reload in progress.)
func TestReloadWatchdogMetrics(t *testing.T) {
	skills, agents := exampleTree(t)
	before := time.Now().Unix()
	ts := startServer(t, "--skills", skills, "--agents", agents, "--watch=false")
	_, body := ts.Get(t, "/metrics")
	for _, want := range []string{"skillserver_reloads_in_progress 0\n", "skillserver_reload_abandoned_total 0\n"} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	m := regexp.MustCompile(`(?m)^skillserver_reload_last_success_timestamp_seconds (\S+)$`).FindSubmatch(body)
	if m == nil {
		t.Fatal("/metrics lacks skillserver_reload_last_success_timestamp_seconds")
	}
	last, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	if last < float64(before) || last > float64(time.Now().Unix()+1) {
		t.Errorf("last successful reload at %v, want the first scan's time, after %d", last, before)
	}
}

// TestRetainedBytesGaugeFollowsExpiry: retention drops what it held when
// its window ends, with no reload, and skillserver_retained_bytes says so;
// it used to keep the figure of the last reload until the next one.
func TestRetainedBytesGaugeFollowsExpiry(t *testing.T) {
	skills := t.TempDir()
	mustWrite(t, filepath.Join(skills, "a", "SKILL.md"), fixture.SkillDoc("a", ""))
	mustWrite(t, filepath.Join(skills, "a", "ref.md"), "one")
	ts := startServerEnv(t, map[string]string{"SKILLSERVER_ADMIN_TOKEN": adminToken}, "--skills", skills, "--watch=false", "--retention", "1s")
	mustWrite(t, filepath.Join(skills, "a", "ref.md"), "two")
	postReload(t, ts)
	if log := ts.Logged(t); !regexp.MustCompile(`"msg":"reload","generation":2,[^\n]*"retained_bytes":[1-9]`).MatchString(log) {
		t.Fatalf("the reload retained nothing:\n%s", log)
	}
	fixture.Eventually(t, 20*time.Second, "skillserver_retained_bytes 0 after the 1s retention window", func() error {
		_, body := ts.Get(t, "/metrics")
		if m := regexp.MustCompile(`(?m)^skillserver_retained_bytes .*$`).Find(body); string(m) != "skillserver_retained_bytes 0" {
			return fmt.Errorf("%s", m)
		}
		return nil
	})
}
