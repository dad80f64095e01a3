package main

import (
	"net"
	"strings"
)

// catalogueURL is where a browser finds the HTML catalogue of a server
// listening at addr, for the first log line: base_url when it is set,
// else the listener's address, 127.0.0.1 for one that listens on every
// interface (as healthcheck asks it).
func catalogueURL(baseURL string, addr net.Addr) string {
	if baseURL != "" {
		return strings.TrimSuffix(baseURL, "/") + "/"
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}
