// Package product builds the skillserver the scripts measure from the
// checkout they run in. The scripts are a module of their own
// (scripts/go.mod), so that what only they need stays out of the
// product's go.mod; the product's root is the directory of the module
// they require.
package product

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Module is the product's module path.
const Module = "github.com/skillserver/skillserver"

// Root is the directory of the product's checkout, wherever in it (or in
// scripts/) the script was started.
func Root() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", Module).Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s (run the scripts inside the skillserver checkout): %w", Module, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// noDrivers are the build tags of the skillserver binary `make build`,
// the image and the releases ship (the Makefile's NO_DRIVERS): serve
// without the bucket drivers, which only skillserver-export links.
const noDrivers = "no_s3blob,no_gcsblob,no_azureblob"

// Build builds cmd/skillserver into dir, as `make build` builds
// bin/skillserver, and returns the binary's path.
func Build(ctx context.Context, dir string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "skillserver")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-tags", noDrivers, "-o", bin, "./cmd/skillserver")
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/skillserver: %w", err)
	}
	return bin, nil
}
