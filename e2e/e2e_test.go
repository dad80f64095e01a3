//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// repoRoot is the repository, from this package's folder.
const repoRoot = ".."

// The exit codes of skillserver (cmd/skillserver's exitOK, exitFailure,
// exitUsage), and the name of the full build, which the build without
// the bucket drivers runs for an export into a bucket (its fullBuild).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	fullBuild   = "skillserver-export"
)

// noDrivers are the build tags that leave every optional bucket driver
// out: the build `make build`, the release archives and the image ship as
// skillserver (the Makefile's NO_DRIVERS).
const noDrivers = "no_s3blob,no_gcsblob,no_azureblob"

// binDir holds the binaries TestMain built, as `make build` lays them
// out: skillserver without the bucket drivers and skillserver-export,
// the full build, beside it. They are built with the race detector when
// the tests are (`make test`), so the server's code runs under it.
var binDir string

// skillserverBin is binDir's skillserver, the binary every test serves
// from.
func skillserverBin() string { return filepath.Join(binDir, "skillserver") }

// TestMain builds the binaries once for every test of the package.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "skillserver-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	// Servers the tests start keep their state_dir ("auto") under the
	// test's folder, never in the home folder of whoever runs them.
	os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	code := 1
	if err := buildPair(dir, raceEnabled); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	if plainDir != "" && plainDir != dir {
		os.RemoveAll(plainDir)
	}
	os.Exit(code)
}

// buildPair builds skillserver (no bucket drivers) and skillserver-export
// (all of them) from cmd/skillserver into dir, with -race when race.
func buildPair(dir string, race bool) error {
	for _, b := range []struct{ name, tags string }{{"skillserver", noDrivers}, {fullBuild, ""}} {
		if err := goBuild(filepath.Join(dir, b.name), b.tags, race); err != nil {
			return err
		}
	}
	return nil
}

// goBuild builds cmd/skillserver into bin with the build tags ("" for
// the full build), static unless race wants cgo.
func goBuild(bin, tags string, race bool) error {
	args := []string{"build", "-trimpath", "-o", bin}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cgo := "CGO_ENABLED=0"
	if race {
		args, cgo = append(args, "-race"), "CGO_ENABLED=1"
	}
	build := exec.Command("go", append(args, "./cmd/skillserver")...)
	build.Dir = repoRoot
	build.Env = append(os.Environ(), cgo)
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

var (
	plainOnce sync.Once
	plainDir  string
	plainErr  error
)

// plainBinaries is binDir's pair without the race detector, built once
// on first use when the tests run with it: what a release ships, for
// the tests that measure the binaries rather than run them.
func plainBinaries(t *testing.T) string {
	t.Helper()
	if !raceEnabled {
		return binDir
	}
	plainOnce.Do(func() {
		plainDir, plainErr = os.MkdirTemp("", "skillserver-e2e-plain-")
		if plainErr == nil {
			plainErr = buildPair(plainDir, false)
		}
	})
	if plainErr != nil {
		t.Fatal(plainErr)
	}
	return plainDir
}
