package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServeAllowedHosts: allowed_hosts reaches the server through the
// environment; a document for an unlisted host is 421, a listed one is
// served with that host in its URLs.
func TestServeAllowedHosts(t *testing.T) {
	skills, agents := exampleTree(t)
	ts := startServerEnv(t, map[string]string{"SKILLSERVER_ALLOWED_HOSTS": "Skills.Example.com,127.0.0.1"}, "--skills", skills, "--agents", agents)
	get := func(host string) (int, string) {
		req, err := http.NewRequest("GET", ts.URL+"/.well-known/agent-skills/index.json", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("skills.example.com"); code != 200 || !strings.Contains(body, `"http://skills.example.com/api/v1/blobs/sha256/`) {
		t.Errorf("listed host: %d %.200s", code, body)
	}
	if code, body := get(strings.TrimPrefix(ts.URL, "http://")); code != 421 || !strings.Contains(body, "misdirected_request") {
		t.Errorf("127.0.0.1 with a port not listed: %d %s", code, body)
	}
	if code, _ := get("evil.test"); code != 421 {
		t.Errorf("unlisted host: %d", code)
	}
}
