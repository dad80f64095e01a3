package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
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
	obs *observer  // set by Run: collects warnings and counts; turns on probe
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

// requests is how many requests the client has made.
func (c *Client) requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Requests
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
		c.probe(ctx, itemName, req.URL, as, resp, len(body))
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

// Media types clients read each kind of response as; anything else is a
// warning.
var mediaTypes = map[media][]string{
	mediaJSON:     {"application/json"},
	mediaEntry:    {"application/json"},
	mediaMarkdown: {"text/markdown", "text/x-markdown", "text/plain", "application/octet-stream"},
	mediaZip:      {"application/zip", "application/x-zip-compressed", "application/octet-stream"},
}

// acceptEncoding is what the skills CLI (Node's fetch) sends.
const acceptEncoding = "gzip, deflate, br"

// probe checks the HTTP behaviour of one 200 answer to GET asked,
// whose body had n bytes.
func (c *Client) probe(ctx context.Context, itemName string, asked *url.URL, as media, resp *http.Response, n int) {
	u := asked.String()
	if c.obs.authed && resp.Request != nil && resp.Request.URL.String() != u {
		c.obs.warn(&Violation{Rule: RuleRedirect, Item: itemName, URL: u, Msg: fmt.Sprintf("redirected to %s: netclaw drops its key on a redirect", resp.Request.URL)})
	}
	if want, ok := mediaTypes[as]; ok {
		ct := resp.Header.Get("Content-Type")
		mt, _, _ := mime.ParseMediaType(ct)
		if !slices.Contains(want, mt) && !(want[0] == "application/json" && strings.HasSuffix(mt, "+json")) {
			c.obs.warn(&Violation{Rule: RuleContentType, Item: itemName, URL: u, Msg: fmt.Sprintf("Content-Type %q, want %s", ct, strings.Join(want, " or "))})
		}
	}
	if as == mediaJSON {
		return // documents reached by href: GET is enough
	}
	// One HEAD probe with the skills CLI's Accept-Encoding: it must answer
	// like GET, and an artifact must not come compressed.
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
	if err != nil {
		return
	}
	req.Header.Set("Accept-Encoding", acceptEncoding)
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	c.count(&c.Requests)
	hr, err := c.HTTP.Do(req)
	if err != nil {
		c.obs.warn(&Violation{Rule: RuleHead, Item: itemName, URL: u, Msg: "HEAD failed: " + unwrapURLError(err)})
		return
	}
	hr.Body.Close()
	ce := hr.Header.Get("Content-Encoding")
	switch {
	case hr.StatusCode != http.StatusOK:
		c.obs.warn(&Violation{Rule: RuleHead, Item: itemName, URL: u, Msg: fmt.Sprintf("HEAD answered %d, GET 200", hr.StatusCode)})
	case as != mediaEntry && ce != "" && ce != "identity":
		c.obs.warn(&Violation{Rule: RuleCompression, Item: itemName, URL: u, Msg: fmt.Sprintf("sent with Content-Encoding %q to a client accepting %q: an archive or file decoded in transit fails digest checks", ce, acceptEncoding)})
	case ce == "" && hr.Header.Get("Content-Length") != "" && hr.Header.Get("Content-Length") != strconv.Itoa(n):
		c.obs.warn(&Violation{Rule: RuleHead, Item: itemName, URL: u, Msg: fmt.Sprintf("HEAD says Content-Length %s, GET sent %d bytes", hr.Header.Get("Content-Length"), n)})
	}
}
