// Package check is a model client of skill servers and a conformance
// check built on it. The Client syncs from a feed the way netclaw's daemon
// and the Netclaw.SkillClient library do, request by request, and fails on
// anything they would reject; tests run it against the real server. Run
// walks any skill server with the same Client, adds what the other clients
// (the skills CLI, legacy readers, A2A gateways) rely on, and reports every
// broken rule by item and URL: `skillserver check`.
//
// It reads feeds only over HTTP and must not import the server's catalog,
// scan, feed or HTTP packages: the wire rules it enforces are its own
// statement of them (wire.go), so a mistake the server makes is not also
// the checker's. It uses internal/item for version order, internal/skill
// for front matter (netclaw's agent-md rules are those by design) and
// internal/content for digests.
//
// The files follow the walks: client.go fetches (bounds, redirects,
// digests), rfcwalk.go reads the RFC index and its artifacts, treewalk.go
// the native manifest tree and the sub-agent tree, synced.go is what a
// client keeps between passes, check.go is Run and the checks no syncing
// client makes (the legacy index, the agent card, HTTP behaviour), and
// report.go the report.
package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/skillserver/skillserver/internal/content"
)

// Bounds clients apply to archives (the skills CLI's: 50 MiB, 1000
// entries), and the command's default bound on one response.
const (
	MaxArchiveBytes = 50 << 20
	MaxArchiveFiles = 1000
	DefaultMaxBytes = 64 << 20
)

// Client syncs from one feed and keeps state between passes, as netclaw
// does, so a second pass over an unchanged server downloads nothing.
type Client struct {
	HTTP *http.Client
	// Base is the feed's base URL, e.g. http://127.0.0.1:8080, or
	// http://host/t/<token> for a path-token feed. The entry points are
	// below it; root-relative hrefs resolve against its origin.
	Base string
	// Token, if set, is sent as Authorization: Bearer on every request,
	// as netclaw does for a feed with a key.
	Token string

	Skills map[string]Synced
	Agents map[string]Synced
	// AgentsAbsent is true when the last pass found no sub-agent tree (404).
	AgentsAbsent bool
	// Downloads counts artifact downloads over the client's lifetime.
	Downloads int
	// Requests counts every request over the client's lifetime.
	Requests int
	// Strict adds the consistency checks that hold within one snapshot
	// (page, identity and RFC entry agree). Clear it when walking a server
	// that reloads under the walk: netclaw does not check those, and a
	// reload between two requests legitimately breaks them.
	Strict bool
	// Skipped counts items a non-strict walk skipped because a reload
	// between the page and the identity request removed the version the
	// page named (netclaw retries those on its next pass).
	Skipped int
	// Concurrency is how many items are fetched at once; 0 is one.
	Concurrency int
	// MaxBytes bounds the bytes read of one response; 0 is no bound.
	MaxBytes int64

	mu  sync.Mutex // guards the maps and counters under Concurrency
	obs *observer  // set by Run: collects warnings, probes HTTP behaviour
}

// New returns a client for the feed at base.
func New(base string) *Client {
	// netclaw drops its key on a redirect, so a redirect is a failure.
	noRedirect := &http.Client{CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		return fmt.Errorf("redirected to %s: authenticated routes must not redirect", req.URL)
	}}
	return &Client{HTTP: noRedirect, Base: strings.TrimRight(base, "/"), Skills: map[string]Synced{}, Agents: map[string]Synced{}, Strict: true}
}

// media is what a response is expected to hold, for the HTTP checks.
type media int

const (
	mediaJSON     media = iota // a document reached by href
	mediaEntry                 // an entry-point document (probed with HEAD)
	mediaMarkdown              // SKILL.md or agent.md
	mediaZip                   // an archive
	mediaFile                  // a resource file
)

func (c *Client) count(n *int) {
	c.mu.Lock()
	*n++
	c.mu.Unlock()
}

// entry is the URL of an entry point of the feed.
func (c *Client) entry(p string) string { return c.Base + p }

// resolve makes a root-relative href absolute against the feed's origin.
func (c *Client) resolve(href string) string {
	if !strings.HasPrefix(href, "/") {
		return href
	}
	b, err := url.Parse(c.Base)
	if err != nil {
		return c.Base + href
	}
	return b.Scheme + "://" + b.Host + href
}

// get fetches u and requires 200. Like netclaw, it never asks for a
// content encoding.
func (c *Client) get(ctx context.Context, itemName, u string, as media) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &Violation{Rule: RuleURL, Item: itemName, URL: u, Msg: err.Error()}
	}
	req.Header.Set("Accept-Encoding", "identity")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	c.count(&c.Requests)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, &Violation{Rule: RuleFetch, Item: itemName, URL: u, Msg: "GET: " + unwrapURLError(err), cause: err}
	}
	defer resp.Body.Close()
	body, err := readBounded(resp.Body, c.MaxBytes)
	switch {
	case errors.Is(err, errTooLarge):
		return nil, &Violation{Rule: RuleSize, Item: itemName, URL: u, Msg: fmt.Sprintf("response is over %d bytes", c.MaxBytes)}
	case err != nil:
		return nil, &Violation{Rule: RuleFetch, Item: itemName, URL: u, Msg: "GET: reading the body: " + err.Error()}
	case resp.StatusCode != http.StatusOK:
		return body, &Violation{Rule: RuleStatus, Item: itemName, URL: u, Status: resp.StatusCode,
			Msg: fmt.Sprintf("GET answered %d, want 200", resp.StatusCode)}
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && ce != "identity" {
		return nil, &Violation{Rule: RuleEncoding, Item: itemName, URL: u,
			Msg: fmt.Sprintf("Content-Encoding %q although the request accepted none (netclaw never decodes)", ce)}
	}
	if c.obs != nil {
		c.obs.response(ctx, c, itemName, req.URL, as, resp, len(body))
	}
	return body, nil
}

// unwrapURLError drops the "Get URL:" prefix the URL is reported beside.
func unwrapURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

var errTooLarge = errors.New("response too large")

// readBounded reads r whole, or fails past n bytes (0: no bound).
func readBounded(r io.Reader, n int64) ([]byte, error) {
	if n <= 0 {
		return io.ReadAll(r)
	}
	b, err := io.ReadAll(io.LimitReader(r, n+1))
	if err == nil && int64(len(b)) > n {
		return nil, errTooLarge
	}
	return b, err
}

func (c *Client) getJSON(ctx context.Context, itemName, u string, as media, v any) error {
	b, err := c.get(ctx, itemName, u, as)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &Violation{Rule: RuleJSON, Item: itemName, URL: u, Msg: "not a JSON document of the expected shape: " + err.Error()}
	}
	return nil
}

// checkDigest requires the canonical form: sha256: and 64 lowercase hex.
func checkDigest(d string) error {
	if p, err := content.ParseDigest(d); err != nil || string(p) != d {
		return bad(RuleDigestFormat, "digest %q is not sha256:<64 lowercase hex> (the skills CLI skips the entry)", d)
	}
	return nil
}

// checkURL requires an absolute URL on the feed's origin.
func (c *Client) checkURL(u string) error {
	pu, err := url.Parse(u)
	if err != nil || !pu.IsAbs() || pu.Host == "" {
		return bad(RuleURL, "url %q is not absolute (netclaw resolves relative URLs against the feed base, not the document)", u)
	}
	if b, err := url.Parse(c.Base); err == nil && (pu.Scheme != b.Scheme || pu.Host != b.Host) {
		return bad(RuleURL, "url %q is not on the feed's origin %s://%s (check the URL clients use: a server behind a proxy advertises its base_url)", u, b.Scheme, b.Host)
	}
	return nil
}

// download fetches an artifact and verifies its digest over the raw body.
func (c *Client) download(ctx context.Context, itemName, u, digest string, as media) ([]byte, error) {
	if err := checkDigest(digest); err != nil {
		return nil, at(err, itemName, u)
	}
	if err := c.checkURL(u); err != nil {
		return nil, at(err, itemName, u)
	}
	b, err := c.get(ctx, itemName, u, as)
	if err != nil {
		return nil, err
	}
	c.count(&c.Downloads)
	if got := content.Sum(b).String(); got != digest {
		return nil, &Violation{Rule: RuleDigestMismatch, Item: itemName, URL: u, Msg: fmt.Sprintf("the body hashes to %s, the feed advertises %s", got, digest)}
	}
	return b, nil
}

// each runs f(0..n-1) on at most Concurrency goroutines.
func (c *Client) each(n int, f func(i int)) {
	workers := min(max(c.Concurrency, 1), n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
