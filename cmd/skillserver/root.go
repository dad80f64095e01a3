package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/skillserver/skillserver/internal/config"
)

// runMain is the whole program: main only supplies the process's context,
// arguments, environment and streams, so tests can runMain it in-process.
// getenv nil is the process environment (read by viper); tests inject
// one.
func runMain(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
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
