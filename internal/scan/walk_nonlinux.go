//go:build unix && !linux

package scan

import (
	"os"

	"golang.org/x/sys/unix"
)

// readNames lists the folder fd through a duplicate handle, so closing it
// leaves fd open.
func readNames(fd int) ([]string, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	if _, err := unix.Seek(dup, 0, 0); err != nil {
		unix.Close(dup)
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "")
	defer f.Close()
	return f.Readdirnames(-1)
}
