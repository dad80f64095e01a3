// Command skillserver publishes AI-agent skills and sub-agents from a
// directory over the Agent Skills Discovery RFC feed and a native manifest.
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(runMain(context.Background(), os.Args[1:], nil, os.Stdout, os.Stderr))
}
