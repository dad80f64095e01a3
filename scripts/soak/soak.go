//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillserver/skillserver/internal/content"
)

// clientKind is a clientKind of client, a row of the summary.
type clientKind int

const (
	kindRFC  clientKind = iota // sync clients' RFC passes
	kindTree                   // sync clients' native tree passes
	kindLoad                   // the load generator
	nKinds
)

var kindNames = [nKinds]string{"RFC sync", "manifest sync", "load"}

// counters are one client kind's figures.
type counters struct {
	requests    atomic.Int64
	ok          atomic.Int64 // 200
	notModified atomic.Int64 // 304
	artifacts   atomic.Int64 // artifact bodies whose sha256 matched their advertised digest
	documents   atomic.Int64 // document bodies whose sha256 matched their ETag
	bytes       atomic.Int64 // body bytes read
	explained   atomic.Int64 // 404s the server's promises allow (see soak.notFound)
	// afterEdit counts artifacts and tree documents answered 200 although
	// the editor changed their item after the document that led to them
	// was requested: retention's promise, exercised and kept.
	afterEdit atomic.Int64
	failures  atomic.Int64
	passes    atomic.Int64 // complete passes (sync clients)
	cold      atomic.Int64 // of which cold
	longest   atomic.Int64 // longest complete pass, ns
}

func (c *counters) pass(d time.Duration, cold bool) {
	c.passes.Add(1)
	if cold {
		c.cold.Add(1)
	}
	for {
		old := c.longest.Load()
		if int64(d) <= old || c.longest.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

// Failure classes: every one of them fails the soak.
const (
	classDigest    = "digest mismatch"
	class5xx       = "5xx answer"
	classStatus    = "unexplained non-200"
	classRetention = "404 within a retention promise"
	classTransport = "transport error"
	classInvalid   = "invalid document or archive"
	classAdmin     = "POST /-/reload not 200"
	classServer    = "server: exit, panic or error log"
	classHarness   = "soak harness (editor, sampler)"
	classMemory    = "memory trend"
)

var classes = []string{classDigest, class5xx, classStatus, classRetention, classTransport,
	classInvalid, classAdmin, classServer, classHarness, classMemory}

// failures counts failures by class and writes each to a log; the first
// few are printed as they happen.
type failures struct {
	mu     sync.Mutex
	counts map[string]int
	w      *bufio.Writer
	file   *os.File
	shown  int
}

const (
	failuresShown  = 20      // printed to stderr as they happen
	failuresLogged = 100_000 // written to failures.log
)

func newFailures(path string) (*failures, error) {
	f := &failures{counts: map[string]int{}}
	if path == "" {
		return f, nil
	}
	file, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	f.file, f.w = file, bufio.NewWriter(file)
	return f, nil
}

func (f *failures) report(who, class, where, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts[class]++
	n := 0
	for _, c := range f.counts {
		n += c
	}
	line := fmt.Sprintf("%s %s: %s: %s", who, class, where, msg)
	if f.w != nil && n <= failuresLogged {
		fmt.Fprintf(f.w, "%s %s\n", time.Now().UTC().Format(time.RFC3339Nano), line)
		_ = f.w.Flush()
	}
	if f.shown < failuresShown {
		f.shown++
		logf("FAIL %s", line)
		if f.shown == failuresShown {
			logf("further failures go to the failures log only")
		}
	}
}

func (f *failures) inClass(class string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[class]
}

func (f *failures) all() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.counts {
		n += c
	}
	return n
}

func (f *failures) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.file != nil {
		_ = f.w.Flush()
		_ = f.file.Close()
		f.file, f.w = nil, nil
	}
}

// soak is what every part of a run shares.
type soak struct {
	base string
	// window is the server's retention window.
	window time.Duration
	// run ends at --duration: loops start no new request after it.
	run context.Context
	// hard ends on Ctrl-C: requests in flight are cut, and not counted.
	hard  context.Context
	gens  *genTracker
	edits *editLog
	stats [nKinds]counters
	fails *failures
	// boundNear is set when retention held close to retention_max_bytes,
	// past which the server may drop what it promised early.
	boundNear atomic.Bool
}

func (s *soak) stopping() bool { return s.run.Err() != nil }

func (s *soak) fail(k clientKind, class, where, msg string) {
	s.stats[k].failures.Add(1)
	s.fails.report(kindNames[k], class, where, msg)
}

// requests is every request the clients and the load generator made.
func (s *soak) requests() int64 {
	var n int64
	for i := range s.stats {
		n += s.stats[i].requests.Load()
	}
	return n
}

// answer is one response, read whole.
type answer struct {
	status   int
	body     []byte
	etag     string
	encoding string
	sent     time.Time // when the request was sent
}

// newHTTPClient is a client that decodes nothing and follows no redirect
// (a redirect is then an unexplained non-200).
func newHTTPClient(conns int) *http.Client {
	return &http.Client{
		Timeout:       2 * time.Minute,
		Transport:     &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: conns, IdleConnTimeout: 30 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// get sends a GET with the header pairs hdr (Accept-Encoding: identity
// unless hdr sets it) and reads the body. ok is false when there is no
// answer to look at: a transport error or a 5xx, both recorded as
// failures, or the soak being cut short.
func (s *soak) get(hc *http.Client, k clientKind, u string, hdr ...string) (a answer, ok bool) {
	a.sent = time.Now()
	req, err := http.NewRequestWithContext(s.hard, http.MethodGet, u, nil)
	if err != nil {
		s.fail(k, classInvalid, u, "not a URL: "+err.Error())
		return a, false
	}
	req.Header.Set("Accept-Encoding", "identity")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	st := &s.stats[k]
	st.requests.Add(1)
	resp, err := hc.Do(req)
	if err != nil {
		if s.hard.Err() == nil {
			s.fail(k, classTransport, u, unwrapURLError(err))
		}
		return a, false
	}
	defer resp.Body.Close()
	a.body, err = io.ReadAll(resp.Body)
	if err != nil {
		if s.hard.Err() == nil {
			s.fail(k, classTransport, u, "reading the body: "+err.Error())
		}
		return a, false
	}
	a.status, a.etag, a.encoding = resp.StatusCode, resp.Header.Get("ETag"), resp.Header.Get("Content-Encoding")
	st.bytes.Add(int64(len(a.body)))
	switch {
	case a.status == http.StatusOK:
		st.ok.Add(1)
	case a.status == http.StatusNotModified:
		st.notModified.Add(1)
	case a.status >= 500:
		s.fail(k, class5xx, u, fmt.Sprintf("answered %d: %s", a.status, snippet(a.body)))
		return a, false
	}
	return a, true
}

// checkDocument requires a document's body to hash to its ETag (the
// digest of the bytes as sent, docs/http-api.md).
func (s *soak) checkDocument(k clientKind, u string, a answer) bool {
	want := etagDigest(a.etag)
	if got := content.Sum(a.body).String(); got != want {
		s.fail(k, classDigest, u, fmt.Sprintf("the document's %d bytes hash to %s, its ETag is %q", len(a.body), got, a.etag))
		return false
	}
	s.stats[k].documents.Add(1)
	return true
}

// checkArtifact requires an artifact's body to hash to the digest its
// document advertised, its ETag to name that digest, no content encoding,
// and a content-addressed URL to name it in its path.
func (s *soak) checkArtifact(k clientKind, u, digest string, a answer) bool {
	if a.encoding != "" && a.encoding != "identity" {
		s.fail(k, classInvalid, u, fmt.Sprintf("artifact sent with Content-Encoding %q", a.encoding))
		return false
	}
	if got := content.Sum(a.body).String(); got != digest {
		s.fail(k, classDigest, u, fmt.Sprintf("the artifact's %d bytes hash to %s, the document advertised %s", len(a.body), got, digest))
		return false
	}
	if a.etag != `"`+digest+`"` {
		s.fail(k, classDigest, u, fmt.Sprintf("ETag %q, want the digest %q", a.etag, digest))
		return false
	}
	if hex, ok := pathDigest(u); ok && "sha256:"+hex != digest {
		s.fail(k, classDigest, u, fmt.Sprintf("the content-addressed URL names sha256:%s, the document advertised %s", hex, digest))
		return false
	}
	s.stats[k].artifacts.Add(1)
	return true
}

// notFound decides what a 404 means. what names the item (for the
// editor's log: "skill:NAME", "agent:NAME"); root is when the request
// for the oldest document of the chain that led to u was sent (the RFC
// index, or the tree page naming the item): every document and artifact
// reached from it was published by a snapshot current at or after root.
//
//   - An artifact advertised less than the retention window ago must
//     answer: its content-addressed URL serves its bytes for the window
//     after the reload that replaced them (docs/http-api.md, "Retention
//     across reloads").
//   - A tree document (page, identity, version) must answer while the
//     snapshot that linked it is one of the 8 newest retired ones and in
//     its window: at most 8 generations newer than the one published at
//     root.
//
// Past those promises a 404 is explained when the editor changed the
// item since shortly before root (a client retries on its next sync);
// anything else is an unexplained non-200. While retention held close to
// retention_max_bytes the server may drop things early, so a 404 within
// a promise is then explained too, if the item was edited.
func (s *soak) notFound(k clientKind, u, what string, root time.Time, treeDoc bool) {
	age := time.Since(root)
	within := age < s.window-time.Second && !s.boundNear.Load()
	detail := fmt.Sprintf("advertised by a document requested %v ago (retention %v)", age.Round(time.Millisecond), s.window)
	if within && treeDoc {
		low := s.gens.atMost(root)
		now, err := s.gens.observe(s.hard)
		within = err == nil && low > 0 && now-low <= 8
		detail = fmt.Sprintf("linked by a document requested %v ago at generation %d or later; now %d (8 retired snapshots kept, retention %v)",
			age.Round(time.Millisecond), low, now, s.window)
	}
	edited := s.edits.touched(what, root.Add(-editSlack))
	switch {
	case within:
		s.fail(k, classRetention, u, "404 for "+what+" "+detail)
	case edited:
		s.stats[k].explained.Add(1)
	default:
		s.fail(k, classStatus, u, "404 for "+what+", which the editor did not change; "+detail)
	}
}

// editSlack covers an edit made just before a document was read whose
// reload came just after: watch_max_wait (2s) and the reload itself.
const editSlack = 5 * time.Second

// etagDigest is the digest an ETag header names (weak or strong).
func etagDigest(etag string) string {
	return strings.Trim(strings.TrimPrefix(etag, "W/"), `"`)
}

// pathDigest is the hex digest of a content-addressed URL
// (/api/v1/blobs/sha256/<hex>/<name>).
func pathDigest(u string) (string, bool) {
	pu, err := url.Parse(u)
	if err != nil {
		return "", false
	}
	_, rest, ok := strings.Cut(pu.Path, "/api/v1/blobs/sha256/")
	if !ok {
		return "", false
	}
	hex, _, _ := strings.Cut(rest, "/")
	return hex, len(hex) == 64
}

func unwrapURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// snippet is the start of a body, for a failure's message.
func snippet(b []byte) string {
	const n = 200
	s := strings.Join(strings.Fields(string(b[:min(len(b), n)])), " ")
	if len(b) > n {
		s += "…"
	}
	return s
}
