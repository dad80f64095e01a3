//go:build linux

// Command soak runs skillserver for a bounded time under what a
// deployment sees all at once, and fails on any wrong byte, server error,
// broken promise or rising memory (docs/benchmarks.md, "Soak"):
//
//	go run -C scripts ./soak [--duration 3m] [--skills 2000] [--clients 4] [--connections 16] [--csv FILE]
//	make soak SOAK_FLAGS='--duration 30m'
//
// It generates a tree (internal/benchtree), builds cmd/skillserver into a
// temporary folder and serves the tree on 127.0.0.1 (an ephemeral port)
// with the file watch on, an admin token and its log, request lines
// included, in a file. Then, for --duration:
//
//   - --clients sync clients each loop over the RFC feed (index, then
//     every artifact and resource) and the native tree (manifest.json,
//     pages, identities, versions, artifacts), revalidating documents with
//     their ETags and checking every artifact's sha256 against its
//     advertised digest and every document's against its ETag;
//   - a load generator keeps --connections connections busy with the
//     index (plain, gzip, 304), the manifest, an archive (200 and 304) and
//     a SKILL.md;
//   - a tree editor makes every kind of change on a schedule (edits in
//     place and by rename, skills added and deleted, versions, resource
//     renames, a 5 MB resource, a skill broken then fixed, a folder
//     swapped by rename, a sub-agent edit), keeping the tree's size level;
//   - SIGHUP and POST /-/reload arrive periodically;
//   - the server's RSS and Go heap are sampled to a CSV file.
//
// At the end it stops the server by its pid (also on Ctrl-C or an error),
// prints a summary table and exits 1 on any digest mismatch, 5xx,
// unexplained non-200, broken retention promise, server error or memory
// trend (--max-rss-slope, --max-rss-growth); 2 on a usage error.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, help, err := parseConfig(os.Args[1:])
	switch {
	case help:
		return
	case err != nil:
		if !errors.Is(err, errUsage) || err.Error() != errUsage.Error() {
			fmt.Fprintf(os.Stderr, "soak: %v\n", err)
		}
		os.Exit(2)
	}
	if err := runCampaign(ctx, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "soak: %v\n", err)
		os.Exit(1)
	}
}
