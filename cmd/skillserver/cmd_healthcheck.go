package main

import (
	"github.com/spf13/cobra"

	"github.com/skillserver/skillserver/internal/config"
)

func newHealthcheckCmd(c *cli) *cobra.Command {
	var target string
	cmd := configCommand(c, &cobra.Command{
		Use:   "healthcheck",
		Short: "Exit 0 when the server's /readyz answers 200",
		Long: "Healthcheck asks the server's readiness endpoint and exits 0 when it answers\n" +
			"200, 1 otherwise: the container image's HEALTHCHECK, since a scratch image\n" +
			"has no curl.",
	}, []string{"listen"}, func(cmd *cobra.Command, cfg *config.Config, _ []string) error {
		return healthcheck(cmd.Context(), cfg, target)
	})
	cmd.Flags().StringVar(&target, "url", "", "readiness URL (default: http://127.0.0.1:<port of the listen setting>/readyz)")
	return cmd
}
