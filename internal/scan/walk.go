package scan

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

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/skill"
)

// Limits bound what one version may hold. Zero means no limit, as 0 is
// off in the configuration.
type Limits struct {
	MaxFileBytes  int64 // bytes per file
	MaxFiles      int   // files per version, SKILL.md included
	MaxTotalBytes int64 // bytes per version
	// MaxFolderDepth is how deep folders may nest below a version folder
	// (max_folder_depth). Each level holds a descriptor while it is
	// walked, so the configuration refuses 0 for it.
	MaxFolderDepth int

	// Frontmatter bounds the front matter of each SKILL.md and agent-md file.
	Frontmatter skill.Limits
}

// A scan opens each folder of a root once and lists it, stats every entry
// once relative to the folder's handle (fstatat), and opens files and
// subfolders relative to it too (openat), so what a file costs does not
// grow with its depth and nothing is looked up by path twice. A name is
// opened that way only when its stat says it is not a symlink, and with
// O_NOFOLLOW, so a name swapped for a link in between fails to open
// instead of being followed. Symlinks are resolved through the root's
// os.Root, which keeps them inside the root. Every open is non-blocking
// and checks what it opened (see openDirFlags), since a name can be
// swapped for a FIFO between its stat and its open.

// treeRoot is one scanned root directory, open for one scan.
type treeRoot struct {
	root    *os.Root // resolves symlinks without leaving the root
	top     *dir     // the root folder itself
	display string   // how problem paths name the root, e.g. "skills"
}

func openTreeRoot(path string) (*treeRoot, error) {
	// os.OpenRoot opens without O_NONBLOCK or O_DIRECTORY; the trailing
	// slash makes the open of anything but a folder (or a link to one)
	// fail at once, so a root swapped for a FIFO cannot block it.
	root, err := os.OpenRoot(strings.TrimSuffix(path, string(os.PathSeparator)) + string(os.PathSeparator))
	if err != nil {
		return nil, err
	}
	t := &treeRoot{root: root, display: displayRoot(path)}
	if t.top, err = t.openThroughRoot("."); err != nil {
		root.Close()
		return nil, err
	}
	return t, nil
}

func (t *treeRoot) Close() error {
	t.top.close()
	return t.root.Close()
}

// report is the path a problem names: the root as configured, then p.
func (t *treeRoot) report(p string) string { return reportUnder(t.display, p) }

// Report is the path a problem names for p, a slash path below the root
// configured as root (a version's item.VersionInfo.Path, say).
func Report(root, p string) string { return reportUnder(displayRoot(root), p) }

// displayRoot is how problem paths name the root configured as root.
func displayRoot(root string) string { return strings.TrimSuffix(toSlash(root), "/") }

func reportUnder(display, p string) string {
	if p == "." || p == "" {
		return display
	}
	return display + "/" + p
}

func isHidden(name string) bool { return strings.HasPrefix(name, ".") }

// dir is an open folder of the root.
type dir struct {
	path string   // relative to the root; "." is the root
	fd   handle   // the folder's handle
	file *os.File // owns fd when the folder was opened through the root
}

func (d *dir) join(name string) string { return path.Join(d.path, name) }

func (d *dir) close() {
	if d.file != nil {
		d.file.Close()
		return
	}
	closeFD(d.fd)
}

// entry is one name in a folder, as lstat'ed: a symlink is described as
// itself.
type entry struct {
	name string
	st   stat
	err  error // the lstat failed; the scan reports it
}

// names returns the names in d, hidden ones left out, sorted.
func (t *treeRoot) names(d *dir) ([]string, error) {
	names, err := readNames(d.fd)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: d.path, Err: err}
	}
	names = slices.DeleteFunc(names, isHidden)
	slices.Sort(names)
	return names, nil
}

// list returns the entries of d, hidden ones left out, sorted by name. A
// name that disappears between the listing and its stat is left out.
func (t *treeRoot) list(d *dir) ([]entry, error) {
	names, err := t.names(d)
	if err != nil {
		return nil, err
	}
	entries := make([]entry, 0, len(names))
	for _, name := range names {
		st, err := lstatAt(d.fd, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "lstat", Path: d.join(name), Err: err}
		}
		entries = append(entries, entry{name: name, st: st})
	}
	return entries, nil
}

// lookup lstats one name of d. The error is also the entry's, so a scan
// that goes on reports it.
func (t *treeRoot) lookup(d *dir, name string) (entry, error) {
	st, err := lstatAt(d.fd, name)
	if err != nil {
		err = &fs.PathError{Op: "lstat", Path: d.join(name), Err: err}
	}
	return entry{name: name, st: st, err: err}, err
}

// resolve says what e is, following it through the root when it is a
// symlink.
func (t *treeRoot) resolve(d *dir, e entry) (stat, error) {
	if e.err != nil {
		return stat{}, e.err
	}
	if !e.st.isSymlink() {
		return e.st, nil
	}
	info, err := t.root.Stat(d.join(e.name))
	if err != nil {
		return stat{}, err
	}
	return statOf(info), nil
}

// openDir opens the folder e of d.
func (t *treeRoot) openDir(d *dir, e entry) (*dir, error) {
	if e.st.isSymlink() {
		return t.openThroughRoot(d.join(e.name))
	}
	fd, err := openDirAt(d.fd, e.name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.join(e.name), Err: err}
	}
	return &dir{path: d.join(e.name), fd: fd}, nil
}

// openFolder opens and lists the folder e of d, or returns the problem
// that kept it from being listed.
func (t *treeRoot) openFolder(d *dir, e entry) (*dir, []entry, *skill.Problem) {
	sub, err := t.openDir(d, e)
	var entries []entry
	if err == nil {
		if entries, err = t.list(sub); err != nil {
			sub.close()
		}
	}
	if err != nil {
		p := openProblem(t.report(d.join(e.name)), "cannot list folder", err)
		return nil, nil, &p
	}
	return sub, entries, nil
}

// openThroughRoot opens the folder p, following symlinks inside the root.
func (t *treeRoot) openThroughRoot(p string) (*dir, error) {
	f, err := t.openInRoot(p, openDirFlags, fs.ModeDir)
	if err != nil {
		return nil, err
	}
	return &dir{path: p, fd: handleOf(t.root, p, f), file: f}, nil
}

// openInRoot opens p through the root (which adds O_NOFOLLOW and
// resolves links itself) and returns it when fstat says it is of type
// want (fs.ModeDir, or 0 for a regular file).
func (t *treeRoot) openInRoot(p string, flags int, want fs.FileMode) (*os.File, error) {
	f, err := t.root.OpenFile(p, flags, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil {
		err = checkOpened(info.Mode(), want)
	}
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return f, nil
}

// openProblem is the problem of a file or folder that could not be
// opened or read; what says which ("cannot read").
func openProblem(report, what string, err error) skill.Problem {
	if fe, ok := errors.AsType[*fileTypeError](err); ok {
		return fileTypeProblem(report, fe.mode)
	}
	return skill.Errorf(report, skill.RuleRead, "%s: %s", what, describeErr(err))
}

// fileTypeProblem is the problem of a name that is not a regular file or
// a folder.
func fileTypeProblem(report string, mode fs.FileMode) skill.Problem {
	return skill.Errorf(report, skill.RuleFileType, "%s is not a regular file; only files and folders are published", fileKind(mode))
}

// readFile reads the regular file e of d into a buffer of size bytes, the
// size its stat gave: one open and one read, no second stat and no probe
// for more. A file written to while it is read is caught by its next
// event or rescan, as any half-saved file is; the bytes published are
// always the bytes hashed.
func (t *treeRoot) readFile(d *dir, e entry, size int64) ([]byte, error) {
	buf := make([]byte, size)
	if e.st.isSymlink() {
		f, err := t.openInRoot(d.join(e.name), openFileFlags, 0)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		n, err := io.ReadFull(f, buf)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !(errors.Is(err, io.EOF) && n == 0) {
			return nil, err
		}
		return buf[:n], nil
	}
	n, err := readFileAt(d.fd, e.name, buf)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: d.join(e.name), Err: err}
	}
	return buf[:n], nil
}

// readPath reads the regular file at p, relative to the root, through
// the root: for bytes needed again after the walk closed their folder.
func (t *treeRoot) readPath(p string, size int64) ([]byte, error) {
	f, err := t.openInRoot(p, openFileFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, size)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !(errors.Is(err, io.EOF) && n == 0) {
		return nil, err
	}
	return buf[:n], nil
}

// findFile looks up the entry name of d (listed as entries): found says
// that d holds the name, and p is its problem when it is not a regular
// file or a link to one.
func (t *treeRoot) findFile(d *dir, entries []entry, name string) (e entry, found bool, p *skill.Problem) {
	i, found := slices.BinarySearchFunc(entries, name, func(e entry, n string) int { return strings.Compare(e.name, n) })
	if !found {
		return entry{}, false, nil
	}
	e = entries[i]
	st, err := t.resolve(d, e)
	switch {
	case err != nil:
		pr := t.resolveProblem(d, e, err)
		return e, true, &pr
	case !st.isRegular():
		pr := skill.Errorf(t.report(d.join(name)), skill.RuleFileType, "%s is %s, not a regular file; replace it with a regular file or a link to one", name, fileKind(st.mode))
		return e, true, &pr
	}
	return e, true, nil
}

// versionFile is one regular versionFile found under a version folder.
type versionFile struct {
	rel  string // relative to the version folder; "" for an agent file
	full string // relative to the root
	st   stat   // of the file itself, symlinks resolved
	// read is true once digest, size and problems are set; data is set
	// too when the bytes were read rather than taken from the cache.
	read     bool
	data     []byte
	digest   content.Digest
	size     int64
	problems []skill.Problem // what the per-file rules found (fileChecks)
}

// fileReader fills in f's digest, size and problems (and its bytes when it
// reads them); read reads them from disk.
type fileReader func(f *versionFile, read func() ([]byte, error)) error

// listFiles walks the version folder v (whose own stat is vst and whose
// entries are listed) and returns every regular, non-hidden file below
// it, sorted by path, and whether it met a symlink. Symlinks are followed
// when they stay inside the root; links that leave it, broken links,
// loops and special files are problems. Each file is read through get while its folder is open, so a
// walk holds one handle per level of nesting; once the walk has found an
// error (a problem, or a limit exceeded) it reads nothing more, since the
// version will not be published.
func (t *treeRoot) listFiles(v *dir, vst stat, entries []entry, lim Limits, get fileReader) (files []versionFile, ps []skill.Problem, linked bool) {
	var total int64
	maxDepth := lim.MaxFolderDepth
	failed := func() bool {
		return skill.HasError(ps) || (lim.MaxFiles > 0 && len(files) > lim.MaxFiles) || (lim.MaxTotalBytes > 0 && total > lim.MaxTotalBytes)
	}
	// A file's path below v is the tail of its path below the root, so
	// the two (one kept by the item, the other by the scan cache) share
	// their bytes.
	prefix := 0
	if v.path != "." {
		prefix = len(v.path) + 1
	}
	var walk func(d *dir, entries []entry, ancestors []stat)
	walk = func(d *dir, entries []entry, ancestors []stat) {
		for _, e := range entries {
			childFull := d.join(e.name)
			childRel := childFull[prefix:]
			linked = linked || e.st.isSymlink()
			st, err := t.resolve(d, e)
			if err != nil {
				ps = append(ps, t.resolveProblem(d, e, err))
				continue
			}
			switch {
			case st.isDir():
				if maxDepth > 0 && len(ancestors) > maxDepth {
					ps = append(ps, skill.Errorf(t.report(childFull), skill.RuleLimit, "folders nest more than %d levels deep below the version folder (max_folder_depth); flatten the tree", maxDepth))
					continue
				}
				if slices.ContainsFunc(ancestors, st.sameFile) {
					ps = append(ps, skill.Errorf(t.report(childFull), skill.RuleSymlink, "symlink loop: the folder contains itself; remove the link"))
					continue
				}
				sub, subEntries, p := t.openFolder(d, e)
				if p != nil {
					ps = append(ps, *p)
					continue
				}
				walk(sub, subEntries, append(ancestors, st))
				sub.close()
			case st.isRegular():
				if !skill.ValidResourcePath(childRel) {
					ps = append(ps, skill.Errorf(t.report(childFull), skill.RuleResourcePath, "file names must be valid UTF-8 without control characters, backslashes or \"..\"; rename the file"))
					continue
				}
				if why := skill.ResourcePathLength(childRel); why != "" {
					ps = append(ps, skill.Errorf(t.report(childFull), skill.RuleResourcePath, "%s", why))
					continue
				}
				if lim.MaxFileBytes > 0 && st.size > lim.MaxFileBytes {
					ps = append(ps, skill.Errorf(t.report(childFull), skill.RuleLimit, "file is %d bytes; the limit is %d (max_file_bytes)", st.size, lim.MaxFileBytes))
					continue
				}
				total += st.size
				files = append(files, versionFile{rel: childRel, full: childFull, st: st})
				if failed() {
					continue
				}
				f := &files[len(files)-1]
				if err := get(f, func() ([]byte, error) { return t.readFile(d, e, st.size) }); err != nil {
					ps = append(ps, openProblem(t.report(childFull), "cannot read", err))
				}
			default:
				ps = append(ps, fileTypeProblem(t.report(childFull), st.mode))
			}
		}
	}
	walk(v, entries, []stat{vst})
	// Walk order puts "a/x.md" before "a-b.md"; published lists and the
	// archive use byte order of the whole path.
	slices.SortFunc(files, func(a, b versionFile) int { return strings.Compare(a.rel, b.rel) })
	if lim.MaxFiles > 0 && len(files) > lim.MaxFiles {
		ps = append(ps, skill.Errorf(t.report(v.path), skill.RuleLimit, "version holds %d files; the limit is %d (max_files)", len(files), lim.MaxFiles))
	}
	if lim.MaxTotalBytes > 0 && total > lim.MaxTotalBytes {
		ps = append(ps, skill.Errorf(t.report(v.path), skill.RuleLimit, "version holds %d bytes; the limit is %d (max_total_bytes)", total, lim.MaxTotalBytes))
	}
	return files, ps, linked
}

// resolveProblem is the problem of an entry resolve failed on: a symlink
// that is broken, loops or leaves the root, or a name that cannot be
// stat'ed.
func (t *treeRoot) resolveProblem(d *dir, e entry, err error) skill.Problem {
	report := t.report(d.join(e.name))
	if e.err != nil || !e.st.isSymlink() {
		return skill.Errorf(report, skill.RuleRead, "cannot stat: %s", describeErr(err))
	}
	return skill.Errorf(report, skill.RuleSymlink, "%s", symlinkProblem(err))
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
