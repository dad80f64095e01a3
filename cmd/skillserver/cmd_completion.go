package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newCompletionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print a shell completion script",
		Long: "Completion prints the completion script for bash, zsh or fish. For the\n" +
			"current bash session:\n\n" +
			"  source <(skillserver completion bash)\n\n" +
			"For every session, write it where the shell loads completions from, e.g.\n" +
			"  skillserver completion bash > /etc/bash_completion.d/skillserver\n" +
			"  skillserver completion zsh > \"${fpath[1]}/_skillserver\"\n" +
			"  skillserver completion fish > ~/.config/fish/completions/skillserver.fish",
		ValidArgs:             []string{"bash", "zsh", "fish"},
		Args:                  cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, out := cmd.Root(), cmd.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, true)
			}
			return fmt.Errorf("unknown shell %q", args[0]) // OnlyValidArgs refused it already
		},
	}
}
