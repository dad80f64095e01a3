// Package provenance reads where a tree came from: the git checkout that
// holds it, its remote's URL and the commit checked out, with go-git (it
// never runs git). It imports no other internal package.
package provenance

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5"
)

// Source is a tree's origin. Repository is the URL of the remote the
// checked-out branch tracks, else of "origin", without any user name or
// password; "" when the checkout has no remote. Commit is the full object
// name of HEAD. Path is the tree's folder relative to the checkout's top,
// with forward slashes ("" for the top itself).
//
// Time is the commit's committer time; zero when the commit object cannot
// be read (a shallow clone's missing object). A SHA-256 repository, which
// go-git v5 does not read, is an error of Read, not a zero Time.
type Source struct {
	Repository string    `json:"repository,omitempty"`
	Commit     string    `json:"commit"`
	Path       string    `json:"path,omitempty"`
	Time       time.Time `json:"-"`
}

// ErrNotCheckout is returned for a folder that no git checkout holds.
var ErrNotCheckout = errors.New("not in a git checkout")

// Read returns the Source of dir: the git checkout at or above it
// (symlinks resolved, as git-sync's published link is one), read with
// go-git: a .git folder, or a .git file naming one ("gitdir: ..."), as
// linked worktrees and submodules have, whose common directory holds the
// refs and the config.
func Read(dir string) (Source, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Source{}, err
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return Source{}, err
	}
	repo, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return Source{}, fmt.Errorf("%s: %w", dir, ErrNotCheckout)
	} else if err != nil {
		return Source{}, fmt.Errorf("%s: %w", dir, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return Source{}, fmt.Errorf("%s: %w", dir, err)
	}
	rel, err := filepath.Rel(wt.Filesystem.Root(), abs)
	if err != nil {
		return Source{}, err
	}
	if rel == "." {
		rel = ""
	}
	head, err := repo.Head()
	if err != nil {
		return Source{}, fmt.Errorf("%s: HEAD: %w (an unborn branch has no commit)", dir, err)
	}
	src := Source{Commit: head.Hash().String(), Path: filepath.ToSlash(rel)}
	if c, err := repo.CommitObject(head.Hash()); err == nil {
		src.Time = c.Committer.When.UTC() // else zero: the caller falls back to what it has
	}
	if cfg, err := repo.Config(); err == nil {
		remote := "origin"
		if b := cfg.Branches[head.Name().Short()]; head.Name().IsBranch() && b != nil && b.Remote != "" {
			remote = b.Remote
		}
		if r := cfg.Remotes[remote]; r != nil && len(r.URLs) > 0 {
			src.Repository = redact(r.URLs[0])
		}
	}
	return src, nil
}

// redact removes a user name and password from a URL: a token in a clone
// URL must not be published.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return raw // scp-like git@host:path or a local path: no password
	}
	u.User = nil
	return u.String()
}
