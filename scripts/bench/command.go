package main

import (
	"errors"
	"flag"
	"os"
)

// What every subcommand shares: its flags and its work directory.

// errUsage marks a command line the subcommand could not parse.
var errUsage = errors.New("usage")

// parseFlags parses args; help is true when -h asked for the usage
// (printed), and err wraps errUsage for bad flags.
func parseFlags(fs *flag.FlagSet, args []string) (help bool, err error) {
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		return true, nil
	case err != nil:
		return false, errUsage
	}
	return false, nil
}

// workDir makes a temporary work directory; cleanup removes it unless
// keep is set (then its path is logged).
func workDir(prefix string, keep bool) (dir string, cleanup func(), err error) {
	dir, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	if keep {
		logf("work directory %s (kept)", dir)
		return dir, func() {}, nil
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}
