package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillserver/skillserver/internal/check"
	"github.com/skillserver/skillserver/internal/config"
)

// errFeedBroken is check's answer for a feed clients will not work with,
// once it has printed the report.
var errFeedBroken = fmt.Errorf("clients will not work with this feed: %w", errReported)

func newCheckCmd() *cobra.Command {
	var (
		opts      check.Options
		format    string
		tokenFile string
	)
	cmd := &cobra.Command{
		Use:   "check URL",
		Short: "Check that clients will work with the skill server at URL",
		Long: "Check walks the skill server at URL (this one, another implementation or a\n" +
			"static host) as its clients do: the RFC index and every artifact and resource,\n" +
			"the native manifest tree with every page, identity and version, the legacy\n" +
			"v0.1 index and the agent card. It prints every broken rule by item and URL,\n" +
			"errors (clients will fail) and warnings (HTTP behaviour some clients trip on),\n" +
			"then a summary; --format json prints the report as JSON. It exits 0 when\n" +
			"clients will work (warnings allowed), 1 when they will not, 2 on usage errors.\n\n" +
			"For a private feed pass --token (sent as a bearer token), or a path-token URL\n" +
			"https://host/t/<token>. Its flags are its own; it reads no server\n" +
			"configuration. docs/check.md lists the rules.",
		Example: "  skillserver check https://skills.example.com\n" +
			"  skillserver check --format json --token-file ./token https://skills.example.com",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.URL = args[0]
			return checkFeed(cmd.Context(), opts, format, tokenFile, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "text", "output format: text or json")
	f.StringVar(&opts.Token, "token", "", "bearer token sent on every request, for a private feed")
	f.StringVar(&tokenFile, "token-file", "", "read the bearer token from this file (keeps it out of the process list)")
	f.IntVar(&opts.Concurrency, "concurrency", check.DefaultConcurrency, "items fetched at once")
	f.DurationVar(&opts.Timeout, "timeout", check.DefaultTimeout, "timeout of each request")
	f.Int64Var(&opts.MaxBytes, "max-bytes", check.DefaultMaxBytes, "most bytes read of one response")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// checkFeed runs the check and prints its report.
func checkFeed(ctx context.Context, opts check.Options, format, tokenFile string, stdout, stderr io.Writer) error {
	switch {
	case format != "text" && format != "json":
		return fmt.Errorf("%w: --format %q: must be text or json", config.ErrUsage, format)
	case opts.Concurrency < 1:
		return fmt.Errorf("%w: --concurrency %d: must be 1 or more", config.ErrUsage, opts.Concurrency)
	case opts.Timeout <= 0:
		return fmt.Errorf("%w: --timeout %s: must be positive", config.ErrUsage, opts.Timeout)
	case opts.MaxBytes <= 0:
		return fmt.Errorf("%w: --max-bytes %d: must be positive", config.ErrUsage, opts.MaxBytes)
	case tokenFile != "" && opts.Token != "":
		return fmt.Errorf("%w: --token and --token-file: give one", config.ErrUsage)
	}
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return fmt.Errorf("%w: --token-file: %w", config.ErrUsage, err)
		}
		opts.Token = strings.TrimSpace(string(b))
	}
	if _, err := check.FeedBase(opts.URL); err != nil {
		return fmt.Errorf("%w: %w", config.ErrUsage, err)
	}
	done := func() {}
	if isTerminal(stderr) {
		opts.Progress, done = progressLine(stderr)
	}
	report, err := check.Run(ctx, opts)
	done()
	if errors.Is(err, check.ErrUsage) {
		return fmt.Errorf("%w: %w", config.ErrUsage, err)
	} else if err != nil {
		return err
	}
	if format == "json" {
		err = report.WriteJSON(stdout)
	} else {
		err = report.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	if !report.OK {
		return errFeedBroken
	}
	return nil
}

// progressLine returns a Progress that redraws one status line on w at
// most every 100ms, and a function that clears it.
func progressLine(w io.Writer) (func(items, requests int), func()) {
	var (
		mu   sync.Mutex
		last time.Time
	)
	progress := func(items, requests int) {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.Sub(last) >= 100*time.Millisecond {
			last = now
			fmt.Fprintf(w, "\r\x1b[Kchecking: %d items, %d requests", items, requests)
		}
	}
	return progress, func() {
		mu.Lock()
		defer mu.Unlock()
		if !last.IsZero() {
			fmt.Fprint(w, "\r\x1b[K")
		}
	}
}
