//go:build !unix

package main

// openFileLimit: there is no descriptor limit to read here (Windows
// handles are bounded by memory), so max_connections 0 picks its most.
func openFileLimit() (limit uint64, ok bool) { return 0, false }
