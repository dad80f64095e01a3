package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/skillserver/skillserver/internal/config"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// run is the whole program: main only supplies the process's context,
// arguments, environment and streams, so tests can run it in-process.
// getenv nil is the process environment (read by viper); tests inject
// one.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	root := newRootCmd(getenv)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	var failed runError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errReported):
		return exitFailure // the command has said why (validate: the problems and the counts)
	case errors.As(err, &failed) && !errors.Is(err, config.ErrUsage):
		fmt.Fprintf(stderr, "%s: %v\n", cmd.CommandPath(), failed.err)
		return exitFailure
	}
	// Flags, arguments, the configuration: the command was misused.
	fmt.Fprintf(stderr, "%s: %v\nRun '%s --help' for usage.\n", cmd.CommandPath(), err, cmd.CommandPath())
	return exitUsage
}

// errReported is returned, wrapped, by a command that has printed why it
// failed: run exits 1 without another message.
var errReported = errors.New("failure reported")

// newRootCmd is the command tree. Adding a command is a file
// cmd_NAME.go with a constructor taking *cli, and one line in the list
// below; a command configured by internal/config keys is built with
// configCommand, and `make golden` regenerates docs/cli. A command's run
// decides the exit code by what it returns: nil is 0; an error wrapping
// config.ErrUsage is a usage error, 2; one wrapping errReported is 1
// without a message; any other error is printed and exits 1.
func newRootCmd(getenv func(string) string) *cobra.Command {
	c := &cli{getenv: getenv}
	root := &cobra.Command{
		Use:   "skillserver",
		Short: "Publish agent skills and sub-agents from a directory",
		Long: "skillserver publishes AI-agent skills and sub-agents from a directory over the\n" +
			"Agent Skills Discovery feed, a native manifest, search and raw bytes.\n\n" +
			"Every key of the configuration is a flag, an environment variable\n" +
			"SKILLSERVER_<KEY> and a key of the YAML file given with --config;\n" +
			"docs/configuration.md lists them.",
		Version: build().Version,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return fmt.Errorf("%w: a command is required:\n\n%s", config.ErrUsage, cmd.UsageString())
		},
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.SetVersionTemplate(versionText(build()))
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return fmt.Errorf("%w: %w", config.ErrUsage, err)
	})
	root.AddCommand(
		newServeCmd(c),
		newValidateCmd(c),
		delegateBuckets(c, newExportCmd(c)),
		newVersionCmd(),
		newHealthcheckCmd(c),
		newCheckCmd(),
		newCompletionCmd(),
	)
	markRunErrors(root)
	return root
}

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
