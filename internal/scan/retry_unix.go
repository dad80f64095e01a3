//go:build unix

package scan

import (
	"errors"

	"golang.org/x/sys/unix"
)

// retry makes a system call again while it fails with EINTR, which a
// signal can cause on network and FUSE filesystems.
func retry(call func() error) error {
	for {
		if err := call(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
