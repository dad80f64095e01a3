// Package provenance reads where a tree came from: the git checkout that
// holds it, its remote's URL and the commit checked out. It reads the
// repository's files (.git, HEAD, refs, packed-refs, config) directly and
// never runs git. It imports no other internal package.
package provenance

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Source is a tree's origin. Repository is the URL of the remote the
// checked-out branch tracks, else of "origin", without any user name or
// password; "" when the checkout has no remote. Commit is the full object
// name of HEAD. Path is the tree's folder relative to the checkout's top,
// with forward slashes ("" for the top itself).
//
// Time is the commit's committer time, read from the object database
// (loose or packed); zero when it cannot be read (an object borrowed from
// an alternate repository, a shallow clone's missing object).
type Source struct {
	Repository string    `json:"repository,omitempty"`
	Commit     string    `json:"commit"`
	Path       string    `json:"path,omitempty"`
	Time       time.Time `json:"-"`
}

// ErrNotCheckout is returned for a folder that no git checkout holds.
var ErrNotCheckout = errors.New("not in a git checkout")

// maxFileBytes bounds every file read; a packed-refs of a large repository
// is the biggest, and refs beyond the bound are not found.
const maxFileBytes = 8 << 20

var objectName = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// Read returns the Source of dir: the nearest folder at or above it
// (symlinks resolved, as git-sync's published link is one) holding a .git
// folder, or a .git file naming one ("gitdir: ..."), as worktrees and
// submodules have.
func Read(dir string) (Source, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Source{}, err
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return Source{}, err
	}
	top := abs
	for {
		gitDir, err := findGitDir(top)
		if err == nil {
			rel, _ := filepath.Rel(top, abs)
			if rel == "." {
				rel = ""
			}
			return readRepo(gitDir, filepath.ToSlash(rel))
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return Source{}, err
		}
		parent := filepath.Dir(top)
		if parent == top {
			return Source{}, fmt.Errorf("%s: %w", dir, ErrNotCheckout)
		}
		top = parent
	}
}

// findGitDir returns the git directory of the checkout whose top is top.
func findGitDir(top string) (string, error) {
	p := filepath.Join(top, ".git")
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return p, nil
	}
	b, err := readSmall(p)
	if err != nil {
		return "", err
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", fmt.Errorf("%s: not a gitdir file", p)
	}
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(top, target)
	}
	return target, nil
}

// readRepo reads HEAD and the remote of the git directory gitDir. A linked
// worktree's git directory holds HEAD; the common directory it names holds
// the refs shared by all worktrees and the config.
func readRepo(gitDir, path string) (Source, error) {
	common := gitDir
	if b, err := readSmall(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = c
	}
	head, err := readSmall(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return Source{}, err
	}
	h := strings.TrimSpace(string(head))
	branch := ""
	if ref, ok := strings.CutPrefix(h, "ref:"); ok {
		ref = strings.TrimSpace(ref)
		branch = strings.TrimPrefix(ref, "refs/heads/")
		if h, err = resolveRef(gitDir, common, ref); err != nil {
			return Source{}, err
		}
	}
	if !objectName.MatchString(h) {
		return Source{}, fmt.Errorf("%s: HEAD %q is not an object name", gitDir, h)
	}
	src := Source{Commit: h, Path: path}
	src.Time, _ = commitTime(common, h) // zero: the caller falls back to what it has
	if cfg, err := readSmall(filepath.Join(common, "config")); err == nil {
		src.Repository = remoteURL(cfg, branch)
	}
	return src, nil
}

// resolveRef finds ref as a loose ref (in the worktree's directory, then
// the common one) or in packed-refs.
func resolveRef(gitDir, common, ref string) (string, error) {
	for _, d := range []string{gitDir, common} {
		if b, err := readSmall(filepath.Join(d, filepath.FromSlash(ref))); err == nil {
			v := strings.TrimSpace(string(b))
			if next, ok := strings.CutPrefix(v, "ref:"); ok {
				return resolveRef(gitDir, common, strings.TrimSpace(next))
			}
			return v, nil
		}
	}
	if b, err := readSmall(filepath.Join(common, "packed-refs")); err == nil {
		for line := range strings.Lines(string(b)) {
			name, r, ok := strings.Cut(strings.TrimSpace(line), " ")
			if ok && r == ref && objectName.MatchString(name) {
				return name, nil
			}
		}
	}
	return "", fmt.Errorf("%s: ref %s not found (an unborn branch has no commit)", gitDir, ref)
}

// remoteURL is, from a git config file, the URL of the remote branch
// tracks (branch.<name>.remote), else of origin, credentials removed.
func remoteURL(cfg []byte, branch string) string {
	sections := parseConfig(cfg)
	remote := "origin"
	if r := sections[`branch "`+branch+`"`]["remote"]; branch != "" && r != "" {
		remote = r
	}
	return redact(sections[`remote "`+remote+`"`]["url"])
}

// parseConfig reads the sections and keys of a git config file, enough for
// remote URLs: [section "sub"] headers, key = value lines, comments.
// Section and key names are case-insensitive; subsections are not.
func parseConfig(b []byte) map[string]map[string]string {
	out := map[string]map[string]string{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			name, sub, hasSub := strings.Cut(line[1:end], " ")
			section = strings.ToLower(name)
			if hasSub {
				section += " " + strings.TrimSpace(sub)
			}
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		v = strings.Trim(v, `"`)
		if out[section] == nil {
			out[section] = map[string]string{}
		}
		if _, seen := out[section][k]; !seen {
			out[section][k] = v
		}
	}
	return out
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

func readSmall(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err == nil && len(b) > maxFileBytes {
		err = fmt.Errorf("%s: larger than %d bytes", p, maxFileBytes)
	}
	return b, err
}
