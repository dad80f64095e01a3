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

	"github.com/spf13/pflag"

	"github.com/skillserver/skillserver/internal/check"
	"github.com/skillserver/skillserver/internal/config"
)

// errFeedBroken is check's answer for a feed clients will not work with,
// once it has printed the report.
var errFeedBroken = errors.New("clients will not work with this feed")

// checkFeed is `skillserver check URL`: a conformance client of any skill
// server. Its flags are its own; it reads no server configuration.
func checkFeed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		opts      check.Options
		format    string
		tokenFile string
	)
	fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "usage: skillserver check [flags] URL\n\nChecks that clients will work with the skill server at URL; see docs/check.md.\n\nflags:\n%s", fs.FlagUsages())
	}
	fs.StringVar(&format, "format", "text", "output format: text or json")
	fs.StringVar(&opts.Token, "token", "", "bearer token sent on every request (for a private feed); a path token goes in URL as /t/<token>")
	fs.StringVar(&tokenFile, "token-file", "", "read the bearer token from this file (keeps it out of the process list)")
	fs.IntVar(&opts.Concurrency, "concurrency", check.DefaultConcurrency, "items fetched at once")
	fs.DurationVar(&opts.Timeout, "timeout", check.DefaultTimeout, "timeout of each request")
	fs.Int64Var(&opts.MaxBytes, "max-bytes", check.DefaultMaxBytes, "most bytes read of one response")
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return err
	case err != nil:
		return fmt.Errorf("%w: %w", config.ErrUsage, err)
	case fs.NArg() != 1:
		return fmt.Errorf("%w: want one URL, got %d arguments", config.ErrUsage, fs.NArg())
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
	opts.URL = fs.Arg(0)
	if _, err := check.Base(opts.URL); err != nil {
		return fmt.Errorf("%w: %w", config.ErrUsage, err)
	}
	done := func() {}
	if isTerminal(stderr) {
		opts.Progress, done = progressLine(stderr)
	}
	report, err := check.Run(ctx, opts)
	done()
	if err != nil {
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

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
