//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"
)

// execFullBuild replaces this process with the full build, run with args:
// the same process ID, streams, signals and exit status.
func execFullBuild(full string, args []string) error {
	err := syscall.Exec(full, append([]string{full}, args...), os.Environ())
	return fmt.Errorf("run %s: %w", full, err)
}
