// Command skillserver publishes AI-agent skills and sub-agents from a
// directory over the Agent Skills Discovery RFC feed and a native manifest.
package main

import (
	"context"
	"os"
	"runtime"
)

func main() {
	// The heap profile's samples are kept in a table of their own (about
	// 1.5 MiB once the first is taken) that nothing reads unless
	// metrics_pprof serves it: sampling starts there (profileAllocations).
	runtime.MemProfileRate = 0
	os.Exit(runMain(context.Background(), os.Args[1:], nil, os.Stdout, os.Stderr))
}
