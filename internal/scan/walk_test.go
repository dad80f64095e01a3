package scan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/skill"
)

// TestLinksResolveEverywhere: the walker opens folders and files relative
// to their parent's handle and never follows a link that way; every kind
// of link inside the root goes through the root instead, at every level,
// and what is under a linked folder is walked like any other folder.
func TestLinksResolveEverywhere(t *testing.T) {
	skills, agents := t.TempDir(), t.TempDir()
	// A versioned skill whose 2.0.0 folder is a link, and whose 1.0.0
	// holds a linked resource folder that itself holds a linked file.
	writeFile(t, filepath.Join(skills, ".shared", "v2", "SKILL.md"), "---\nname: multi\ndescription: d\nmetadata:\n  version: \"2.0.0\"\n---\n", 0o644)
	writeFile(t, filepath.Join(skills, ".shared", "refs", "guide.md"), "guide\n", 0o644)
	writeFile(t, filepath.Join(skills, ".shared", "shared.md"), "shared\n", 0o644)
	symlink(t, "../../.shared/shared.md", filepath.Join(skills, ".shared", "refs", "shared.md"))
	writeFile(t, filepath.Join(skills, "multi", "1.0.0", "SKILL.md"), "---\nname: multi\ndescription: d\n---\n", 0o644)
	symlink(t, "../../.shared/refs", filepath.Join(skills, "multi", "1.0.0", "refs"))
	symlink(t, "../.shared/v2", filepath.Join(skills, "multi", "2.0.0"))
	// A flat skill whose SKILL.md is a link.
	writeFile(t, filepath.Join(skills, ".shared", "linked.md"), skillMD("linked"), 0o644)
	symlink(t, "../.shared/linked.md", filepath.Join(skills, "linked", "SKILL.md"))
	// Hidden names are not published, whatever they are.
	writeFile(t, filepath.Join(skills, "linked", ".cache", "x"), "x", 0o644)
	writeFile(t, filepath.Join(skills, ".git", "HEAD"), "ref", 0o644)

	writeFile(t, filepath.Join(agents, ".shared", "reviewer.md"), agentMD("reviewer"), 0o644)
	symlink(t, ".shared/reviewer.md", filepath.Join(agents, "reviewer.md"))
	writeFile(t, filepath.Join(agents, ".shared", "planner", "1.0.0.md"), agentMD("planner"), 0o644)
	symlink(t, ".shared/planner", filepath.Join(agents, "planner"))

	snap := scanTree(t, Input{SkillsDir: skills, AgentsDir: agents})
	for _, p := range snap.Problems {
		if p.Severity == skill.SeverityError {
			t.Errorf("unexpected problem %v", p)
		}
	}
	multi, ok := snap.Skill("multi")
	if !ok {
		t.Fatalf("multi missing; problems %v", snap.Problems)
	}
	if _, ok := multi.Version("2.0.0"); !ok {
		t.Errorf("linked version folder 2.0.0 missing; versions %v", multi.Versions)
	}
	v1, ok := multi.Version("1.0.0")
	if !ok {
		t.Fatal("1.0.0 missing")
	}
	for path, want := range map[string]string{"refs/guide.md": "guide\n", "refs/shared.md": "shared\n"} {
		r, ok := v1.Resource(path)
		if !ok {
			t.Errorf("1.0.0 lacks %s; resources %v", path, v1.Resources)
			continue
		}
		if b, _ := snap.Store.Get(r.Digest); string(b) != want {
			t.Errorf("%s = %q, want %q", path, b, want)
		}
	}
	linked, ok := snap.Skill("linked")
	if !ok {
		t.Fatalf("skill with a linked SKILL.md missing; problems %v", snap.Problems)
	}
	if len(linked.Latest.Resources) != 0 {
		t.Errorf("hidden files published: %v", linked.Latest.Resources)
	}
	if _, ok := snap.Skill(".git"); ok {
		t.Error("hidden folder published as a skill")
	}
	if _, ok := snap.Agent("reviewer"); !ok {
		t.Errorf("linked agent file missing; problems %v", snap.Problems)
	}
	if a, ok := snap.Agent("planner"); !ok || len(a.Versions) != 1 {
		t.Errorf("linked versioned agent folder: %v, %v; problems %v", a, ok, snap.Problems)
	}
}

// TestScanClosesEveryHandle: a scan holds folders open while it walks
// them, and closes every one, whatever it found (links, loops, errors).
func TestScanClosesEveryHandle(t *testing.T) {
	fds := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("no /proc/self/fd: %v", err)
		}
		return len(entries)
	}
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "deep", "SKILL.md"), skillMD("deep"), 0o644)
	writeFile(t, filepath.Join(root, "deep", "a", "b", "c", "d.md"), "d\n", 0o644)
	symlink(t, "../../deep/a", filepath.Join(root, "loop", "a", "up"))
	writeFile(t, filepath.Join(root, "loop", "SKILL.md"), skillMD("loop"), 0o644)
	symlink(t, "..", filepath.Join(root, "loop", "a", "parent"))
	writeFile(t, filepath.Join(root, "multi", "1.0.0", "SKILL.md"), skillMD("multi"), 0o644)
	writeFile(t, filepath.Join(root, "multi", "notes.txt"), "ignored\n", 0o644)
	writeFile(t, filepath.Join(root, "multi", "bad version", "SKILL.md"), skillMD("multi"), 0o644)

	scanTree(t, Input{SkillsDir: root, AgentsDir: "../../testdata/agents"}) // warm: the runtime opens what it keeps
	before := fds()
	for range 3 {
		snap := scanTree(t, Input{SkillsDir: root, AgentsDir: "../../testdata/agents"})
		if _, ok := snap.Skill("deep"); !ok {
			t.Fatalf("deep missing; problems %v", snap.Problems)
		}
		if len(problemsUnder(snap, root+"/loop", skill.RuleSymlink)) == 0 {
			t.Fatalf("no loop problem; problems %v", snap.Problems)
		}
	}
	if after := fds(); after != before {
		t.Errorf("open descriptors: %d before three scans, %d after", before, after)
	}
}

// TestDeepNestingIsALimit: the walk holds a handle per level, so folders
// nested deeper than max_folder_depth (64 by default) are a limit
// problem naming the key, not a descriptor shortage, and the neighbours
// stay published.
func TestDeepNestingIsALimit(t *testing.T) {
	for _, tt := range []struct {
		name  string
		limit int // max_folder_depth
		depth int // what the limit allows
	}{
		{"default", 64, 64},
		{"configured", 3, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, filepath.Join(root, "good", "SKILL.md"), skillMD("good"), 0o644)
			writeFile(t, filepath.Join(root, "ok", "SKILL.md"), skillMD("ok"), 0o644)
			writeFile(t, filepath.Join(root, "deep", "SKILL.md"), skillMD("deep"), 0o644)
			okDir, deepDir := filepath.Join(root, "ok"), filepath.Join(root, "deep")
			for range tt.depth {
				okDir = filepath.Join(okDir, "d")
			}
			for range tt.depth + 1 {
				deepDir = filepath.Join(deepDir, "d")
			}
			writeFile(t, filepath.Join(okDir, "leaf.md"), "leaf\n", 0o644)
			writeFile(t, filepath.Join(deepDir, "leaf.md"), "leaf\n", 0o644)

			snap := scanTree(t, Input{SkillsDir: root, Limits: Limits{MaxFolderDepth: tt.limit}})
			ps := problemsUnder(snap, root+"/deep/", skill.RuleLimit)
			want := fmt.Sprintf("more than %d levels deep below the version folder (max_folder_depth)", tt.depth)
			if len(ps) != 1 || !strings.Contains(ps[0].Message, want) {
				t.Errorf("limit problems under deep/: %v, want one saying %q; all problems %v", ps, want, snap.Problems)
			}
			if _, ok := snap.Skill("deep"); ok {
				t.Error("a skill nested too deep was published")
			}
			ok, found := snap.Skill("ok")
			if !found {
				t.Fatalf("a skill nested exactly %d levels deep is missing; problems %v", tt.depth, snap.Problems)
			}
			if len(ok.Latest.Resources) != 1 {
				t.Errorf("ok resources = %v", ok.Latest.Resources)
			}
			if _, found := snap.Skill("good"); !found {
				t.Error("valid neighbour dropped")
			}
		})
	}
}

// TestFolderDepthOff: max_folder_depth 0 (off, which only a caller of the
// package can ask for: the configuration refuses it) bounds nothing.
func TestFolderDepthOff(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "deep")
	writeFile(t, filepath.Join(dir, "SKILL.md"), skillMD("deep"), 0o644)
	for range 70 {
		dir = filepath.Join(dir, "d")
	}
	writeFile(t, filepath.Join(dir, "leaf.md"), "leaf\n", 0o644)
	snap := scanTree(t, Input{SkillsDir: root})
	if s, ok := snap.Skill("deep"); !ok || len(s.Latest.Resources) != 1 {
		t.Errorf("70 levels with the depth off: published %v; problems %v", ok, snap.Problems)
	}
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// swapForFIFO replaces what is at p by a FIFO, as a racing writer could
// between the scan's stat of a name and its open. It may run off the
// test's goroutine, so it reports with Errorf.
func swapForFIFO(t *testing.T, p string) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Error(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Errorf("mkfifo: %v", err)
	}
}

// mustReturn runs fn and fails the test if it blocks. The deadline only
// makes a regression fail fast; on timeout the FIFOs are opened for
// writing, which releases an open blocked on one, so fn ends either way.
func mustReturn(t *testing.T, fifos []string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	select {
	case <-done:
	case <-ctx.Done():
		for _, p := range fifos {
			if fd, err := unix.Open(p, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
				unix.Close(fd)
			}
		}
		<-done
		t.Fatal("the scan blocked opening a FIFO")
	}
}

// openSkillFolder opens the tree root and its folder name, as a scan
// does before walking it.
func openSkillFolder(t *testing.T, root, name string) (*treeRoot, *dir, stat, []entry) {
	t.Helper()
	tr, err := openTreeRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	e, err := tr.lookup(tr.top, name)
	if err != nil {
		t.Fatal(err)
	}
	st, err := tr.resolve(tr.top, e)
	if err != nil {
		t.Fatal(err)
	}
	d, entries, p := tr.openFolder(tr.top, e)
	if p != nil {
		t.Fatal(p)
	}
	t.Cleanup(d.close)
	return tr, d, st, entries
}

// TestOpenRefusesAFIFOSwappedIn: a name that becomes a FIFO between the
// scan's stat and its open, directly or as a symlink's target, is
// neither waited on (an open of a FIFO blocks until a writer comes) nor
// read as an empty file: the open is non-blocking and what it opened is
// checked. Each case swaps the FIFO in at exactly that moment.
func TestOpenRefusesAFIFOSwappedIn(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		for _, tt := range []struct {
			name   string
			link   bool   // ref.md is a link to .shared/target.md
			swap   string // what becomes a FIFO, below the root
			report string // the path of the problem, below the root
		}{
			{"at its path", false, "s/ref.md", "s/ref.md"},
			{"through a symlink", true, ".shared/target.md", "s/ref.md"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				root := t.TempDir()
				writeFile(t, filepath.Join(root, "s", "SKILL.md"), skillMD("s"), 0o644)
				if tt.link {
					writeFile(t, filepath.Join(root, ".shared", "target.md"), "target\n", 0o644)
					symlink(t, "../.shared/target.md", filepath.Join(root, "s", "ref.md"))
				} else {
					writeFile(t, filepath.Join(root, "s", "ref.md"), "ref\n", 0o644)
				}
				tr, d, st, entries := openSkillFolder(t, root, "s")
				fifo := filepath.Join(root, tt.swap)
				get := func(f *versionFile, read func() ([]byte, error)) error {
					if f.rel == "ref.md" {
						swapForFIFO(t, fifo)
					}
					b, err := read()
					if err != nil {
						return err
					}
					f.read, f.data, f.digest, f.size = true, b, content.Sum(b), int64(len(b))
					return nil
				}
				var files []versionFile
				var ps []skill.Problem
				mustReturn(t, []string{fifo}, func() { files, ps, _ = tr.listFiles(d, st, entries, Limits{}, get) })
				want := tr.report(tt.report)
				if len(ps) != 1 || ps[0].Path != want || ps[0].Rule != skill.RuleFileType || !strings.Contains(ps[0].Message, "a FIFO") {
					t.Errorf("problems %v, want one file-type problem at %s naming a FIFO", ps, want)
				}
				if len(files) != 2 || !files[0].read || files[0].rel != skill.FileName {
					t.Errorf("files %+v: SKILL.md beside it must still be read", files)
				}
			})
		}
	})
	t.Run("folder through a symlink", func(t *testing.T) {
		root := t.TempDir()
		writeFile(t, filepath.Join(root, "s", "SKILL.md"), skillMD("s"), 0o644)
		writeFile(t, filepath.Join(root, ".shared", "refs", "guide.md"), "guide\n", 0o644)
		symlink(t, "../.shared/refs", filepath.Join(root, "s", "refs"))
		tr, d, _, entries := openSkillFolder(t, root, "s")
		fifo := filepath.Join(root, ".shared", "refs")
		swapForFIFO(t, fifo)
		i := slices.IndexFunc(entries, func(e entry) bool { return e.name == "refs" })
		var p *skill.Problem
		mustReturn(t, []string{fifo}, func() {
			var sub *dir
			if sub, _, p = tr.openFolder(d, entries[i]); sub != nil {
				sub.close()
			}
		})
		if p == nil || p.Path != tr.report("s/refs") || p.Severity != skill.SeverityError {
			t.Errorf("problem %v, want an error at s/refs", p)
		}
	})
	t.Run("root", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "skills")
		mkfifo(t, fifo)
		var err error
		mustReturn(t, []string{fifo}, func() {
			var tr *treeRoot
			if tr, err = openTreeRoot(fifo); err == nil {
				tr.Close()
			}
		})
		if err == nil {
			t.Error("a FIFO opened as a root")
		}
	})
}
