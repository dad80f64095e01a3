package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillserver/skillserver/internal/config"
)

// validateKeys are the keys that decide what serve would publish.
var validateKeys = []string{"skills", "agents", "max_file_bytes", "max_files", "max_total_bytes", "max_folder_depth",
	"max_frontmatter_bytes", "max_frontmatter_keys", "max_list_items", "max_value_chars", "max_tag_chars",
	"max_frontmatter_depth", "max_value_problems"}

func newValidateCmd(c *cli) *cobra.Command {
	var format string
	cmd := configCommand(c, &cobra.Command{
		Use:   "validate",
		Short: "Check a tree as serve would scan it and report every problem",
		Long: "Validate scans exactly what serve would serve with the same flags, environment\n" +
			"and config file, prints one line per problem (path: rule: message) or a JSON\n" +
			"array with --format json, and exits 0 when there are no errors (warnings\n" +
			"allowed), 1 when there are, 2 on usage errors.",
	}, validateKeys, func(cmd *cobra.Command, cfg *config.Config, _ []string) error {
		if format != "text" && format != "json" {
			return fmt.Errorf("%w: --format %q: must be text or json", config.ErrUsage, format)
		}
		return validate(cmd.Context(), cfg, format, cmd.OutOrStdout(), cmd.ErrOrStderr())
	})
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}
