//go:build unix

package scan

import (
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The system calls of a scan, relative to an open folder. Each retries on
// EINTR (retry_unix.go).

// handle is an open folder's descriptor.
type handle = int

// handleOf is the descriptor of f, the folder p of root.
func handleOf(_ *os.Root, _ string, f *os.File) handle { return int(f.Fd()) }

func lstatAt(dirfd int, name string) (stat, error) {
	var st unix.Stat_t
	if err := retry(func() error { return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
		return stat{}, err
	}
	return stat{
		mode:    modeOf(uint32(st.Mode)),
		size:    st.Size,
		modTime: time.Unix(st.Mtim.Unix()),
		dev:     uint64(st.Dev),
		ino:     uint64(st.Ino),
	}, nil
}

// Every open of a scan is non-blocking, so a name that turns into a FIFO
// (or a device) between its stat and its open cannot block the scan: an
// open of a FIFO without O_NONBLOCK waits for a writer, forever. The
// opened descriptor is then fstat'ed and anything but the kind of file
// the scan asked for is refused (checkOpened). Reads of regular files
// and folders do not heed O_NONBLOCK, so it is never cleared.
const (
	openFileFlags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC
	openDirFlags  = openFileFlags | unix.O_DIRECTORY
)

// openDirAt opens the folder name of dirfd; a symlink there fails (ELOOP
// or ENOTDIR) rather than being followed.
func openDirAt(dirfd int, name string) (int, error) {
	return openAt(dirfd, name, openDirFlags|unix.O_NOFOLLOW, fs.ModeDir)
}

// readFileAt reads the regular file name of dirfd into buf and returns
// how many bytes it read: fewer when the file is shorter than buf, never
// more. A symlink there fails rather than being followed.
func readFileAt(dirfd int, name string, buf []byte) (int, error) {
	fd, err := openAt(dirfd, name, openFileFlags|unix.O_NOFOLLOW, 0)
	if err != nil {
		return 0, err
	}
	defer closeFD(fd)
	n := 0
	for n < len(buf) {
		var m int
		err := retry(func() (err error) {
			m, err = unix.Read(fd, buf[n:])
			return err
		})
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}

// openAt opens name of dirfd with flags and returns the descriptor when
// fstat says it is of type want (fs.ModeDir, or 0 for a regular file).
func openAt(dirfd int, name string, flags int, want fs.FileMode) (int, error) {
	var fd int
	err := retry(func() (err error) {
		fd, err = unix.Openat(dirfd, name, flags, 0)
		return err
	})
	if err != nil {
		return 0, err
	}
	var st unix.Stat_t
	if err := retry(func() error { return unix.Fstat(fd, &st) }); err != nil {
		closeFD(fd)
		return 0, err
	}
	if err := checkOpened(modeOf(uint32(st.Mode)), want); err != nil {
		closeFD(fd)
		return 0, err
	}
	return fd, nil
}

func closeFD(fd int) { unix.Close(fd) }

// modeOf converts a stat mode to an fs.FileMode, as os.Lstat does.
func modeOf(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// statOf converts what os.Root's Stat returns.
func statOf(info fs.FileInfo) stat {
	s := stat{mode: info.Mode(), size: info.Size(), modTime: info.ModTime()}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		s.dev, s.ino = uint64(st.Dev), uint64(st.Ino)
	}
	return s
}
