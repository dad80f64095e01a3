package catalog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/skillserver/skillserver/internal/skill"
)

// Limits bound what one version may hold. Zero means no limit.
type Limits struct {
	MaxFileBytes  int64 // bytes per file
	MaxFiles      int   // files per version, SKILL.md included
	MaxTotalBytes int64 // bytes per version
}

// treeRoot is one scanned root directory, opened with os.OpenRoot so no
// path, symlink or ".." can reach outside it.
type treeRoot struct {
	root    *os.Root
	fsys    fs.FS
	display string // how problem paths name the root, e.g. "skills"
}

func openTreeRoot(dir string) (*treeRoot, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &treeRoot{root: root, fsys: root.FS(), display: strings.TrimSuffix(toSlash(dir), "/")}, nil
}

func (t *treeRoot) Close() error { return t.root.Close() }

// report is the path a problem names: the root as configured, then p.
func (t *treeRoot) report(p string) string {
	if p == "." || p == "" {
		return t.display
	}
	return t.display + "/" + p
}

// readFile reads f into a buffer of the size its stat gave: one open and
// one read, no second stat and no probe for more. A file written to while
// it is read is caught by its next event or rescan, as any half-saved
// file is; the bytes published are always the bytes hashed.
func (t *treeRoot) readFile(fl file) ([]byte, error) {
	f, err := t.root.Open(fl.full)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, fl.size)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !(errors.Is(err, io.EOF) && n == 0) {
		return nil, err
	}
	return buf[:n], nil
}

// stat resolves p, following symlinks that stay inside the root.
func (t *treeRoot) stat(p string) (fs.FileInfo, error) { return t.root.Stat(p) }

func isHidden(name string) bool { return strings.HasPrefix(name, ".") }

// folder is a folder of the tree, stat'ed and listed once.
type folder struct {
	path    string // relative to the root
	info    fs.FileInfo
	entries []fs.DirEntry
}

// listFolder lists p, whose (symlink-resolved) info the caller has.
func (t *treeRoot) listFolder(p string, info fs.FileInfo) (folder, error) {
	entries, err := fs.ReadDir(t.fsys, p)
	return folder{path: p, info: info, entries: entries}, err
}

// has reports whether f holds a regular file (or a link to one) called
// name.
func (t *treeRoot) has(f folder, name string) bool {
	i, found := slices.BinarySearchFunc(f.entries, name, func(e fs.DirEntry, n string) int { return strings.Compare(e.Name(), n) })
	if !found {
		return false
	}
	switch e := f.entries[i]; {
	case e.Type().IsRegular():
		return true
	case e.Type()&fs.ModeSymlink != 0:
		info, err := t.stat(path.Join(f.path, name))
		return err == nil && info.Mode().IsRegular()
	}
	return false
}

// file is one regular file found under a version folder.
type file struct {
	rel     string // relative to the version folder
	full    string // relative to the root
	size    int64
	mode    fs.FileMode
	modTime time.Time
	info    fs.FileInfo // of the file itself, symlinks resolved
}

// listFiles walks dir (relative to the root) and returns every regular,
// non-hidden file below it, sorted by path. Symlinks are followed when they
// stay inside the root; links that leave it, broken links, loops and
// special files are problems.
func (t *treeRoot) listFiles(top folder, lim Limits) (files []file, ps []skill.Problem) {
	dir := top.path
	var total int64
	var walk func(rel string, ancestors []fs.FileInfo)
	walk = func(rel string, ancestors []fs.FileInfo) {
		full := path.Join(dir, rel)
		entries := top.entries // the top folder is listed already
		if rel != "." {
			var err error
			if entries, err = fs.ReadDir(t.fsys, full); err != nil {
				ps = append(ps, skill.Errorf(t.report(full), skill.RuleRead, "cannot list folder: %s", describeErr(err)))
				return
			}
		}
		for _, e := range entries {
			if isHidden(e.Name()) {
				continue
			}
			childRel := path.Join(rel, e.Name())
			childFull := path.Join(dir, childRel)
			var info fs.FileInfo
			var err error
			if e.Type()&fs.ModeSymlink != 0 {
				info, err = t.stat(childFull)
				if err != nil {
					ps = append(ps, skill.Errorf(t.report(childFull), skill.RuleSymlink, "%s", symlinkProblem(err)))
					continue
				}
			} else if info, err = e.Info(); err != nil {
				ps = append(ps, skill.Errorf(t.report(childFull), skill.RuleRead, "cannot stat: %s", describeErr(err)))
				continue
			}
			switch {
			case info.IsDir():
				for _, a := range ancestors {
					if os.SameFile(a, info) {
						ps = append(ps, skill.Errorf(t.report(childFull), skill.RuleSymlink, "symlink loop: the folder contains itself; remove the link"))
						info = nil
						break
					}
				}
				if info != nil {
					walk(childRel, append(ancestors, info))
				}
			case info.Mode().IsRegular():
				if !validResourcePath(childRel) {
					ps = append(ps, skill.Errorf(t.report(childFull), skill.RuleResourcePath, "file names must be valid UTF-8 without control characters, backslashes or \"..\"; rename the file"))
					continue
				}
				if lim.MaxFileBytes > 0 && info.Size() > lim.MaxFileBytes {
					ps = append(ps, skill.Errorf(t.report(childFull), skill.RuleLimit, "file is %d bytes; the limit is %d (max_file_bytes)", info.Size(), lim.MaxFileBytes))
					continue
				}
				total += info.Size()
				files = append(files, file{rel: childRel, full: childFull, size: info.Size(), mode: info.Mode(), modTime: info.ModTime(), info: info})
			default:
				ps = append(ps, skill.Errorf(t.report(childFull), skill.RuleFileType, "%s is not a regular file; only files and folders are published", fileKind(info.Mode())))
			}
		}
	}
	walk(".", []fs.FileInfo{top.info})
	// Walk order puts "a/x.md" before "a-b.md"; published lists and the
	// archive use byte order of the whole path.
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.rel, b.rel) })
	if lim.MaxFiles > 0 && len(files) > lim.MaxFiles {
		ps = append(ps, skill.Errorf(t.report(dir), skill.RuleLimit, "version holds %d files; the limit is %d (max_files)", len(files), lim.MaxFiles))
	}
	if lim.MaxTotalBytes > 0 && total > lim.MaxTotalBytes {
		ps = append(ps, skill.Errorf(t.report(dir), skill.RuleLimit, "version holds %d bytes; the limit is %d (max_total_bytes)", total, lim.MaxTotalBytes))
	}
	return files, ps
}

// validResourcePath: clients reject an archive or index holding a
// backslash or ".." anywhere in a path (the skills CLI drops the whole
// v0.1 index), so "notes..md" is refused too.
func validResourcePath(p string) bool {
	if !fs.ValidPath(p) || strings.ContainsRune(p, '\\') || strings.Contains(p, "..") {
		return false
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return false
		}
	}
	return true
}

func symlinkProblem(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "broken symlink: its target does not exist"
	case errors.Is(err, syscall.ELOOP):
		return "symlink loop; remove the link"
	default:
		return fmt.Sprintf("symlink points outside the root (%s); copy the file into the tree instead", describeErr(err))
	}
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "a special file"
	}
}

// describeErr strips the path an *fs.PathError repeats, since the problem
// already names it.
func describeErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func toSlash(p string) string { return strings.ReplaceAll(p, string(os.PathSeparator), "/") }
