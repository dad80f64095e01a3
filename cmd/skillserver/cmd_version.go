package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date and Go release",
		Long: "Version prints the version alone on the first line (the agent card's version,\n" +
			"/api/v1/info's version and the container image tag), then the commit, its\n" +
			"time and the Go release, each only when known.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), versionText(build()))
			return err
		},
	}
}
