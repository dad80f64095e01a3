package main

import (
	"net"
	"testing"
)

func TestCatalogueURL(t *testing.T) {
	for _, c := range []struct{ base, addr, want string }{
		{"", "[::]:8080", "http://127.0.0.1:8080/"},
		{"", "0.0.0.0:8080", "http://127.0.0.1:8080/"},
		{"", "127.0.0.1:41234", "http://127.0.0.1:41234/"},
		{"", "[::1]:8080", "http://[::1]:8080/"},
		{"", "192.0.2.7:80", "http://192.0.2.7:80/"},
		{"https://skills.example.com", "[::]:8080", "https://skills.example.com/"},
		{"https://example.com/skills/", "[::]:8080", "https://example.com/skills/"},
	} {
		addr, err := net.ResolveTCPAddr("tcp", c.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := catalogueURL(c.base, addr); got != c.want {
			t.Errorf("catalogueURL(%q, %s) = %q, want %q", c.base, c.addr, got, c.want)
		}
	}
}
