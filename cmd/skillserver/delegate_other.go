//go:build !unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// execFullBuild runs the full build with args on this process's streams
// and exits with its status (Windows has no exec that keeps the process).
func execFullBuild(full string, args []string) error {
	cmd := exec.Command(full, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", full, err)
	}
	os.Exit(0)
	return nil
}
