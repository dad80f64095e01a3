package scan

import (
	"io/fs"
	"time"
)

// stat is what one stat call says of a file or folder.
type stat struct {
	mode     fs.FileMode
	size     int64
	modTime  time.Time
	dev, ino uint64
}

func (s stat) isDir() bool          { return s.mode.IsDir() }
func (s stat) isRegular() bool      { return s.mode.IsRegular() }
func (s stat) isSymlink() bool      { return s.mode&fs.ModeSymlink != 0 }
func (s stat) sameFile(o stat) bool { return s.ino != 0 && s.dev == o.dev && s.ino == o.ino }
func (s stat) executable() bool     { return s.mode&0o111 != 0 }
func (s stat) modNanos() int64      { return s.modTime.UnixNano() }

// fileTypeError is what an open found when the name had become another
// kind of file since its stat.
type fileTypeError struct {
	mode fs.FileMode // what was opened
	want fs.FileMode // fs.ModeDir, or 0 for a regular file
}

func (e *fileTypeError) Error() string {
	if e.want == fs.ModeDir {
		return fileKind(e.mode) + " is not a folder"
	}
	return fileKind(e.mode) + " is not a regular file"
}

// checkOpened refuses an opened file whose type is not want.
func checkOpened(mode, want fs.FileMode) error {
	if mode.Type() != want {
		return &fileTypeError{mode: mode, want: want}
	}
	return nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	case m.IsRegular():
		return "a regular file"
	default:
		return "a special file"
	}
}
