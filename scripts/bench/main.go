//go:build linux

// Command bench measures the server against nginx serving the same bytes,
// and how its costs grow with the tree (docs/benchmarks.md). It is what
// scripts/bench-serve.sh and scripts/bench-growth.sh run:
//
//	go run -C scripts ./bench serve  [--skills 300] [--duration 5s] [--rounds 3]
//	go run -C scripts ./bench growth [--sizes 100,1000,10000,100000] [--duration 5s]
//
// Everything runs on 127.0.0.1; every process it starts (the server,
// nginx, wrk) is stopped by its pid before it returns, also on Ctrl-C.
// It exits non-zero when anything fails: a side answering a different
// body or status than expected, wrk reporting errors, a process that does
// not come up.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const commandsUsage = `usage:
  bench serve  [flags]   the server against nginx serving a mirror of its responses
  bench growth [flags]   cold start, memory, index rate, update and rescan by tree size

Run "bench serve -h" or "bench growth -h" for the flags.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, commandsUsage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "serve":
		err = runServe(ctx, os.Args[2:])
	case "growth":
		err = runGrowth(ctx, os.Args[2:])
	case "-h", "--help", "help":
		fmt.Print(commandsUsage)
		return
	default:
		fmt.Fprintf(os.Stderr, "bench: unknown command %q\n%s", os.Args[1], commandsUsage)
		os.Exit(2)
	}
	if errors.Is(err, errUsage) {
		if err != errUsage { // the flag package has said what was wrong otherwise
			fmt.Fprintf(os.Stderr, "bench %s: %v\n", os.Args[1], err)
		}
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
