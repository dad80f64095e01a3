package main

import (
	"net"
	"testing"
)

// freeAddrs returns n distinct loopback addresses that were free a moment
// ago, for a process the test starts to listen on. Every listener stays
// open until all n are chosen, so no two addresses are the same: nginx,
// given two server blocks on one address, silently serves both from the
// first one's root instead of failing.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		addrs[i] = ln.Addr().String()
	}
	return addrs
}

// freePort is one free loopback address (host:port).
func freePort(t *testing.T) string {
	t.Helper()
	return freeAddrs(t, 1)[0]
}
