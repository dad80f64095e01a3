//go:build !unix

package catalog

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
)

// Where there are no descriptor-relative system calls (Windows), a scan
// reaches every name through the root's os.Root by path: one lookup per
// call instead of one openat, with the same rules. Such systems have no
// inode numbers in a portable stat, so a folder that contains itself is
// not recognised as such; the depth bound ends the walk instead.

// handle names an open folder: the root and the folder's path in it.
type handle struct {
	root *os.Root
	path string
}

func handleOf(root *os.Root, p string, _ *os.File) handle { return handle{root: root, path: p} }

func (h handle) join(name string) string { return path.Join(h.path, name) }

// FIFOs cannot block an open here, and there is no O_DIRECTORY: what was
// opened is still checked by its stat (checkOpened).
const (
	openFileFlags = os.O_RDONLY
	openDirFlags  = os.O_RDONLY
)

func lstatAt(h handle, name string) (stat, error) {
	info, err := h.root.Lstat(h.join(name))
	if err != nil {
		return stat{}, err
	}
	return statOf(info), nil
}

// errLink is what opening a symlink as a plain name gives: links are
// followed only through the root (openInRoot), as with O_NOFOLLOW.
var errLink = errors.New("is a symbolic link")

func openDirAt(h handle, name string) (handle, error) {
	st, err := lstatAt(h, name)
	switch {
	case err != nil:
		return handle{}, err
	case st.isSymlink():
		return handle{}, errLink
	}
	if err := checkOpened(st.mode, fs.ModeDir); err != nil {
		return handle{}, err
	}
	return handle{root: h.root, path: h.join(name)}, nil
}

func readFileAt(h handle, name string, buf []byte) (int, error) {
	st, err := lstatAt(h, name)
	switch {
	case err != nil:
		return 0, err
	case st.isSymlink():
		return 0, errLink
	}
	f, err := h.root.Open(h.join(name))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if err := checkOpened(info.Mode(), 0); err != nil {
		return 0, err
	}
	n, err := io.ReadFull(f, buf)
	if errors.Is(err, io.ErrUnexpectedEOF) || (errors.Is(err, io.EOF) && n == 0) {
		err = nil
	}
	return n, err
}

func readNames(h handle) ([]string, error) {
	f, err := h.root.Open(h.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

func closeFD(handle) {}

func statOf(info fs.FileInfo) stat {
	return stat{mode: info.Mode(), size: info.Size(), modTime: info.ModTime()}
}
