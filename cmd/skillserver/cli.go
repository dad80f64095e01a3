package main

import (
	"errors"
	"io"
	"os"

	"github.com/skillserver/skillserver/internal/config"
	"github.com/spf13/cobra"
)

// What the commands share: the exit codes, the errors that choose one, the
// configuration-backed command, and the terminal test. root.go builds the
// command tree from the cmd_*.go files on top of it.

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// errReported is returned, wrapped, by a command that has printed why it
// failed: runMain exits 1 without another message.
var errReported = errors.New("failure reported")

// cli is what the commands share: the environment the configuration is
// read from. Streams and the context come from cobra (OutOrStdout,
// ErrOrStderr, Context).
type cli struct {
	getenv func(string) string
}

// configCommand builds a command whose flags are the configuration keys
// named in keys (their Flag, default and help from config.Keys) plus
// --config, and whose run gets the loaded, validated configuration. The
// command takes no arguments unless cmd.Args says otherwise; add
// command-only flags to the returned command's Flags() and read them in
// run.
func configCommand(c *cli, cmd *cobra.Command, keys []string, run func(cmd *cobra.Command, cfg *config.Config, args []string) error) *cobra.Command {
	if cmd.Args == nil {
		cmd.Args = cobra.NoArgs
	}
	config.AddFlags(cmd.Flags(), keys...)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cfg, err := config.Load(cmd.Flags(), c.getenv)
		if err != nil {
			return err
		}
		return run(cmd, cfg, args)
	}
	return cmd
}

// runError marks an error a command's run returned, as opposed to one
// cobra found in the command line (a usage error, exit 2).
type runError struct{ err error }

func (e runError) Error() string { return e.err.Error() }

func (e runError) Unwrap() error { return e.err }

// markRunErrors wraps the run of every command in the tree so that its
// errors are runErrors.
func markRunErrors(cmd *cobra.Command) {
	if runE := cmd.RunE; runE != nil {
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			if err := runE(cmd, args); err != nil {
				return runError{err}
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		markRunErrors(sub)
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
