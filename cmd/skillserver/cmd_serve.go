package main

import (
	"github.com/spf13/cobra"

	"github.com/skillserver/skillserver/internal/config"
)

func newServeCmd(c *cli) *cobra.Command {
	return configCommand(c, &cobra.Command{
		Use:   "serve",
		Short: "Serve the skills and sub-agents over HTTP",
		Long: "Serve scans the skills and sub-agents roots, then serves the feeds, the\n" +
			"native manifest, search and the raw bytes. GET /readyz answers 200 once the\n" +
			"first scan is published. SIGHUP reloads; SIGINT and SIGTERM drain and exit 0.",
	}, config.ServeNames(), func(cmd *cobra.Command, cfg *config.Config, _ []string) error {
		return serve(cmd.Context(), cfg, cmd.ErrOrStderr())
	})
}
