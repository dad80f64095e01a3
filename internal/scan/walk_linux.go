package scan

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// readNames lists the folder fd, freshly opened, with getdents, without
// a stat per name (list stats each name itself, relative to the folder).
func readNames(fd int) ([]string, error) {
	buf := make([]byte, 16<<10)
	var names []string
	for {
		var n int
		err := retry(func() (err error) {
			n, err = unix.Getdents(fd, buf)
			return err
		})
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = syscall.ParseDirent(buf[:n], -1, names)
	}
}
