package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"gocloud.dev/blob"

	"github.com/skillserver/skillserver/internal/config"
)

// The release archives and the container image hold two builds of this
// command. skillserver is built without the optional bucket drivers
// (-tags no_s3blob,no_gcsblob,no_azureblob): their package
// initialisation would cost every process, serve, validate and the
// image's healthcheck every 10 seconds alike, about 24 MB of memory.
// skillserver-export beside it is the full build. An export into a bucket
// whose driver this binary lacks runs skillserver-export instead, with
// the same arguments and environment (docs/operations.md, "Smaller
// builds").

// fullBuild is the name of the full build's binary, next to this one.
const fullBuild = "skillserver-export"

// delegateBuckets makes cmd (export) hand a run whose --out is a bucket
// URL with no driver in this binary to the full build next to it. Without
// one, the run goes on and export.Open refuses the URL naming the build
// tag and skillserver-export.
func delegateBuckets(c *cli, cmd *cobra.Command) *cobra.Command {
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		if c.getenv != nil {
			// Run in-process with an environment of its own (tests): a
			// child would read the process's instead.
			return nil
		}
		cfg, err := config.Load(cmd.Flags(), nil)
		if err != nil {
			return nil // the command's run reports it
		}
		scheme, ok := bucketScheme(cfg.ExportOut)
		if !ok || blob.DefaultURLMux().ValidBucketScheme(scheme) {
			return nil
		}
		full, ok := fullBuildPath()
		if !ok {
			return nil
		}
		return runError{execFullBuild(full, os.Args[1:])}
	}
	return cmd
}

// bucketScheme is the scheme of out when export.Open takes it as a bucket
// URL ("s3" of "s3://bucket?region=x"); ok is false for a folder.
func bucketScheme(out string) (scheme string, ok bool) {
	scheme, _, ok = strings.Cut(out, "://")
	return scheme, ok && scheme != "" && !strings.ContainsAny(scheme, `/\`)
}

// fullBuildPath is the full build next to this executable (symbolic
// links resolved), if there is one and it is not this executable itself.
func fullBuildPath() (string, bool) {
	self, err := os.Executable()
	if err != nil {
		return "", false
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	name := fullBuild
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	full := filepath.Join(filepath.Dir(self), name)
	fi, err := os.Stat(full)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	if me, err := os.Stat(self); err == nil && os.SameFile(me, fi) {
		return "", false // the full build lacks the driver too: no loop
	}
	return full, true
}
