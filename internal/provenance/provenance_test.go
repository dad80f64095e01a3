package provenance

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/fixture"
)

const commit = "0123456789abcdef0123456789abcdef01234567"

const config = `[core]
	bare = false
[remote "origin"]
	url = https://user:s3cret@example.com/team/skills.git
	fetch = +refs/heads/*:refs/remotes/origin/*
[remote "upstream"]
	url = git@example.com:team/skills.git
[branch "main"]
	remote = origin
[branch "dev"]
	remote = upstream
`

// TestRead covers the layouts a root can sit in: a plain checkout with a
// loose or packed ref, a detached HEAD, a branch tracking another remote,
// and git-sync's linked worktree behind a symlink, whose .git is a file
// and whose refs and config are in the common directory.
func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout func(t *testing.T, top string) (root string)
		want   Source
	}{
		{"loose ref", func(t *testing.T, top string) string {
			fixture.WriteFile(t, filepath.Join(top, ".git/HEAD"), "ref: refs/heads/main\n", 0o644)
			fixture.WriteFile(t, filepath.Join(top, ".git/refs/heads/main"), commit+"\n", 0o644)
			fixture.WriteFile(t, filepath.Join(top, ".git/config"), config, 0o644)
			return filepath.Join(top, "skills")
		}, Source{Repository: "https://example.com/team/skills.git", Commit: commit, Path: "skills"}},
		{"packed ref, other remote", func(t *testing.T, top string) string {
			fixture.WriteFile(t, filepath.Join(top, ".git/HEAD"), "ref: refs/heads/dev\n", 0o644)
			fixture.WriteFile(t, filepath.Join(top, ".git/packed-refs"), "# pack-refs with: peeled fully-peeled sorted\n"+commit+" refs/heads/dev\n", 0o644)
			fixture.WriteFile(t, filepath.Join(top, ".git/config"), config, 0o644)
			return top
		}, Source{Repository: "git@example.com:team/skills.git", Commit: commit}},
		{"detached, no remote", func(t *testing.T, top string) string {
			fixture.WriteFile(t, filepath.Join(top, ".git/HEAD"), commit+"\n", 0o644)
			return filepath.Join(top, "a", "b")
		}, Source{Commit: commit, Path: "a/b"}},
		{"git-sync worktree", func(t *testing.T, top string) string {
			wt := filepath.Join(top, ".worktrees", commit)
			fixture.WriteFile(t, filepath.Join(top, ".git/config"), config, 0o644)
			fixture.WriteFile(t, filepath.Join(top, ".git/worktrees", commit, "HEAD"), commit+"\n", 0o644)
			fixture.WriteFile(t, filepath.Join(top, ".git/worktrees", commit, "commondir"), "../..\n", 0o644)
			fixture.WriteFile(t, filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(top, ".git/worktrees", commit)+"\n", 0o644)
			fixture.WriteFile(t, filepath.Join(wt, "skills/x/SKILL.md"), "", 0o644)
			link := filepath.Join(top, "link")
			fixture.Symlink(t, wt, link)
			return filepath.Join(link, "skills")
		}, Source{Repository: "https://example.com/team/skills.git", Commit: commit, Path: "skills"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tc.layout(t, t.TempDir())
			if err := os.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			got, err := Read(root)
			if err != nil || got != tc.want {
				t.Errorf("Read = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestReadNotACheckout(t *testing.T) {
	dir := t.TempDir()
	if _, err := Read(dir); !errors.Is(err, ErrNotCheckout) {
		// A TMPDIR inside a checkout would find it; say so rather than fail.
		if err == nil {
			t.Skipf("%s is inside a git checkout", dir)
		}
		t.Errorf("Read(%s) = %v, want ErrNotCheckout", dir, err)
	}
}

// TestReadMatchesGit compares Read with git itself on a real repository.
func TestReadMatchesGit(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string { return fixture.Git(t, dir, args...) }
	git("init", "-q", "-b", "main")
	git("remote", "add", "origin", "https://token@example.com/team/skills.git")
	fixture.WriteFile(t, filepath.Join(dir, "skills/x/SKILL.md"), "x\n", 0o644)
	git("add", ".")
	git("commit", "-q", "-m", "one")
	git("pack-refs", "--all")
	got, err := Read(filepath.Join(dir, "skills"))
	sec, _ := strconv.ParseInt(git("log", "-1", "--format=%ct"), 10, 64)
	want := Source{Repository: "https://example.com/team/skills.git", Commit: git("rev-parse", "HEAD"), Path: "skills", Time: time.Unix(sec, 0).UTC()}
	if err != nil || got != want {
		t.Errorf("Read = %+v, %v; want %+v", got, err, want)
	}
}
