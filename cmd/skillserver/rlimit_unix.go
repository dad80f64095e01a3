//go:build unix

package main

import "golang.org/x/sys/unix"

// openFileLimit is the soft limit on open descriptors; ok is false when
// it cannot be read.
func openFileLimit() (limit uint64, ok bool) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0, false
	}
	return rl.Cur, true
}
