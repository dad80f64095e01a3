package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/config"
	"github.com/skillserver/skillserver/internal/throttle"

	"github.com/skillserver/skillserver/internal/fixture"
)

// defaultAuthFailures is auth_failures_per_minute's default: the tests
// below send one more wrong token than it allows at once.
const defaultAuthFailures = 60

// TestAuthFailuresAreThrottled: wrong tokens from one address, admin or
// read, get 403 until auth_failures_per_minute is spent, then 429 with
// Retry-After, and from then on no token of that address is checked: the
// right one gets 429 too, so a guesser cannot tell a hit. The right
// token from another address (127.0.0.2) gets 200, and a request with no
// token 401 (it is no guess and is not counted).
func TestAuthFailuresAreThrottled(t *testing.T) {
	skills, agents := exampleTree(t)
	file := filepath.Join(t.TempDir(), "tokens")
	fixture.WriteTokens(t, file, "all "+fixture.AllSecret+" *\n")
	for _, tc := range []struct {
		name, method, path, good, wrong string
	}{
		{"admin reload", "POST", "/-/reload", "Bearer " + adminToken, "Bearer wrong-admin-token-0123"},
		{"admin problems", "GET", "/-/problems", "Bearer " + adminToken, "Bearer wrong-admin-token-0123"},
		{"read bearer", "GET", "/manifest.json", "Bearer " + fixture.AllSecret, "Bearer wrong-secret-0123456789"},
		{"read path", "GET", "/t/%s/manifest.json", fixture.AllSecret, "wrong-secret-0123456789"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A server each: each address's allowance is the server's.
			ts := startServerEnv(t, map[string]string{"SKILLSERVER_ADMIN_TOKEN": adminToken},
				"--skills", skills, "--agents", agents, "--read-tokens-file", file, "--watch=false")
			tryFrom := func(client *http.Client, token string) *http.Response {
				u, auth := ts.URL+tc.path, token
				if strings.Contains(tc.path, "%s") {
					u, auth = ts.URL+fmt.Sprintf(tc.path, token), ""
				}
				req, err := http.NewRequestWithContext(t.Context(), tc.method, u, nil)
				if err != nil {
					t.Fatal(err)
				}
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp
			}
			try := func(token string) *http.Response { return tryFrom(http.DefaultClient, token) }
			for i := range defaultAuthFailures {
				if resp := try(tc.wrong); resp.StatusCode != http.StatusForbidden {
					t.Fatalf("wrong token %d of %d: %d, want 403", i+1, defaultAuthFailures, resp.StatusCode)
				}
			}
			resp := try(tc.wrong)
			if resp.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("wrong token %d: %d, want 429", defaultAuthFailures+1, resp.StatusCode)
			}
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
				t.Errorf("Retry-After %q, want 1-60 seconds", resp.Header.Get("Retry-After"))
			}
			if resp := try(tc.good); resp.StatusCode != http.StatusTooManyRequests {
				t.Errorf("the right token from the held address: %d, want 429 (a 200 tells a guesser it guessed right)", resp.StatusCode)
			}
			if resp := tryFrom(fromAddress(t, "127.0.0.2"), tc.good); resp.StatusCode != http.StatusOK {
				t.Errorf("the right token from another address: %d, want 200", resp.StatusCode)
			}
			if resp := try(tc.wrong); resp.StatusCode != http.StatusTooManyRequests {
				t.Errorf("a wrong token after the right one: %d, want 429 (a success does not reset the count)", resp.StatusCode)
			}
			noToken := ts.URL + strings.Replace(tc.path, "/t/%s", "", 1)
			if resp, _ := fixture.Fetch(t, tc.method, noToken, "", ""); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("no token from the throttled address: %d, want 401", resp.StatusCode)
			}
			fixture.AssertNoSecret(t, ts)
		})
	}
}

// TestAuthFailuresLimitConfigured: auth_failures_per_minute sets the
// allowance, and 0 turns the limit off.
func TestAuthFailuresLimitConfigured(t *testing.T) {
	skills, _ := exampleTree(t)
	for _, tc := range []struct {
		limit string
		want  []int
	}{
		{"2", []int{403, 403, 429, 429}},
		{"0", []int{403, 403, 403, 403}},
	} {
		ts := startServerEnv(t, map[string]string{"SKILLSERVER_ADMIN_TOKEN": adminToken},
			"--skills", skills, "--watch=false", "--auth-failures-per-minute", tc.limit)
		var got []int
		for range tc.want {
			resp, _ := fixture.Fetch(t, "POST", ts.URL+"/-/reload", "Bearer wrong-admin-token-0123", "")
			got = append(got, resp.StatusCode)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("auth_failures_per_minute %s: %v, want %v", tc.limit, got, tc.want)
		}
	}
}

// TestWeakTokensRefusedAtStart: a token that can be guessed stops the
// server at start, whatever form it is given in, with an error naming
// the key or the line and what to do.
func TestWeakTokensRefusedAtStart(t *testing.T) {
	skills, _ := exampleTree(t)
	empty := sha256.Sum256(nil)
	for _, tc := range []struct {
		name   string
		env    map[string]string
		tokens string
		want   []string
	}{
		{"one-character admin token", map[string]string{"SKILLSERVER_ADMIN_TOKEN": "x"}, "",
			[]string{"admin_token: shorter than 16 characters", "openssl rand -hex 24"}},
		{"short clear read token", nil, "ok " + fixture.AllSecret + " *\nshort abc *\n",
			[]string{":2: token \"short\": the secret is shorter than 16 characters"}},
		{"hash of the empty secret", nil, "ok " + fixture.AllSecret + " *\nempty sha256:" + hex.EncodeToString(empty[:]) + " *\n",
			[]string{":2: token \"empty\"", "empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"serve", "--listen", "127.0.0.1:0", "--skills", skills}
			if tc.tokens != "" {
				file := filepath.Join(t.TempDir(), "tokens")
				fixture.WriteTokens(t, file, tc.tokens)
				args = append(args, "--read-tokens-file", file)
			}
			// A server that starts stops at once, and exits 0.
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			ctx = context.WithValue(ctx, readyKey{}, func(string) { cancel() })
			var stderr fixture.SyncBuffer
			code := runMain(ctx, args, func(k string) string { return tc.env[k] }, io.Discard, &stderr)
			if code == 0 {
				t.Fatalf("started with a weak token; stderr:\n%s", stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
			if strings.Contains(stderr.String(), fixture.AllSecret) {
				t.Errorf("stderr holds a secret:\n%s", stderr.String())
			}
		})
	}
}

// TestAuthFailuresHelpNamesTheBound: the key's help gives the bound of
// remembered addresses the limiter has.
func TestAuthFailuresHelpNamesTheBound(t *testing.T) {
	for _, k := range config.Keys {
		if k.Name == "auth_failures_per_minute" {
			if want := fmt.Sprintf("At most %d addresses", throttle.MaxKeys); !strings.Contains(k.Help, want) {
				t.Errorf("help %q lacks %q", k.Help, want)
			}
			return
		}
	}
	t.Fatal("no key auth_failures_per_minute")
}

// fromAddress is a client whose connections come from ip, a loopback
// address other than the server's peer in the other tests.
func fromAddress(t *testing.T, ip string) *http.Client {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}
