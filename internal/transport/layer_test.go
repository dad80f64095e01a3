package transport

import (
	"strings"
	"testing"
)

func TestRequestIDs(t *testing.T) {
	ids := newRequestIDs()
	seen := map[string]bool{}
	for range 1000 {
		id := ids.new()
		if len(id) != 16 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("request ID %q is not 16 hex digits", id)
		}
		if seen[id] {
			t.Fatalf("request ID %q repeated", id)
		}
		seen[id] = true
	}
	if other := newRequestIDs().new(); seen[other] {
		t.Errorf("a second generator repeated %q", other)
	}
	for id, ok := range map[string]bool{
		"abc.123": true, "A-Z_a-z.0-9": true, strings.Repeat("x", 64): true,
		"": false, strings.Repeat("x", 65): false, "a b": false, "a/b": false, "é": false, "a\n": false,
	} {
		if got := validRequestID(id); got != ok {
			t.Errorf("validRequestID(%q) = %v, want %v", id, got, ok)
		}
	}
}
