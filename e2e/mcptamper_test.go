//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// tamperProxy is a reverse proxy on 127.0.0.1 in front of the real server
// that rewrites one resource of every skills/list result it passes on:
// what the Inspector sees is a server whose manifest lies about a file.
type tamperProxy struct {
	URL string

	uri    string                   // the resource rewritten
	mutate func(res map[string]any) // rewrites its manifest entry

	mu       sync.Mutex
	tampered int      // skills/list results rewritten
	before   []string // the entry as the server sent it
	problems []string // responses the proxy could not handle
}

// startTamperProxy starts a tamperProxy for the server at target that
// applies mutate to the manifest entry of uri.
func startTamperProxy(t *testing.T, target, uri string, mutate func(res map[string]any)) *tamperProxy {
	t.Helper()
	tu, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &tamperProxy{uri: uri, mutate: mutate}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(tu)
			// Uncompressed bodies: the transport asks for gzip itself and
			// decodes it, so ModifyResponse reads plain JSON.
			pr.Out.Header.Del("Accept-Encoding")
		},
		ModifyResponse: p.modify,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
		<-done
	})
	p.URL = "http://" + ln.Addr().String()
	return p
}

// modify rewrites a skills/list result (a single JSON-RPC response in an
// application/json body) and passes every other response on unchanged.
func (p *tamperProxy) modify(resp *http.Response) error {
	if resp.Request.Method != http.MethodPost {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	out := body
	defer func() {
		resp.Body = io.NopCloser(bytes.NewReader(out))
		resp.ContentLength = int64(len(out))
		resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
	}()
	if len(body) == 0 {
		return nil // a notification's 202
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		p.problem("a POST answered %s, not application/json: %s", ct, head(string(body), 300))
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // sizes stay integers
	var msg map[string]any
	if err := dec.Decode(&msg); err != nil {
		p.problem("a response is not one JSON-RPC message (%v): %s", err, head(string(body), 300))
		return nil
	}
	result, _ := msg["result"].(map[string]any)
	skills, ok := result["skills"].([]any)
	if !ok {
		return nil
	}
	found := false
	for _, s := range skills {
		entry, _ := s.(map[string]any)
		resources, _ := entry["resources"].([]any)
		for _, r := range resources {
			res, _ := r.(map[string]any)
			if res["uri"] != p.uri {
				continue
			}
			was, _ := json.Marshal(res)
			p.mutate(res)
			found = true
			p.mu.Lock()
			p.before = append(p.before, string(was))
			p.mu.Unlock()
		}
	}
	if !found {
		return nil // another page
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(msg); err != nil {
		return err
	}
	out = buf.Bytes()
	p.mu.Lock()
	p.tampered++
	p.mu.Unlock()
	return nil
}

func (p *tamperProxy) problem(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.problems = append(p.problems, fmt.Sprintf(format, args...))
}

// TestMCPInspectorTampered puts a proxy between the Inspector and the
// real server that makes skills/list lie about one file: once its digest
// (another valid sha256), once its size (one byte more). The Inspector,
// reading the real bytes, must exit 7 (nonconformant) and report exactly
// that file of that skill as a mismatch, every other skill ok, in the
// modern and the legacy era.
func TestMCPInspectorTampered(t *testing.T) {
	npx := requireInterop(t)
	const skillName = "code-review"
	const uri = "skill://" + skillName + "/references/checklist.md"
	skills, agents := exampleTree(t)
	ts := startServer(t, "--skills", skills, "--agents", agents)
	want := indexNames(t, ts.URL, "")

	// The file's real digest and size, as the server lists them.
	realDigest, realSize := "", int64(-1)
	resp, body := mcpPost(t, ts.URL+"/mcp", "", "skills/get", map[string]any{"uri": "skill://" + skillName + "/SKILL.md"})
	var got struct {
		Result struct {
			Skill struct {
				Resources []struct {
					URI    string `json:"uri"`
					Digest string `json:"digest"`
					Size   int64  `json:"size"`
				} `json:"resources"`
			} `json:"skill"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("skills/get %s: status %d (%v):\n%s", skillName, resp.StatusCode, err, body)
	}
	for _, r := range got.Result.Skill.Resources {
		if r.URI == uri {
			realDigest, realSize = r.Digest, r.Size
		}
	}
	if realDigest == "" || realSize < 0 {
		t.Fatalf("skills/get %s lists no %s:\n%s", skillName, uri, body)
	}
	sum := sha256.Sum256([]byte("not the bytes of " + uri))
	fakeDigest := "sha256:" + hex.EncodeToString(sum[:])

	for _, tc := range []struct {
		name   string
		mutate func(res map[string]any)
		check  func(f fileReport) error
	}{
		{"digest", func(res map[string]any) { res["digest"] = fakeDigest }, func(f fileReport) error {
			if f.ExpectedDigest != fakeDigest || f.ActualDigest != realDigest {
				return fmt.Errorf("expected digest %s and actual %s, want %s and %s", f.ExpectedDigest, f.ActualDigest, fakeDigest, realDigest)
			}
			return nil
		}},
		{"size", func(res map[string]any) { res["size"] = json.Number(strconv.FormatInt(realSize+1, 10)) }, func(f fileReport) error {
			if f.ExpectedSize != realSize+1 || f.ActualSize != realSize {
				return fmt.Errorf("expected size %d and actual %d, want %d and %d", f.ExpectedSize, f.ActualSize, realSize+1, realSize)
			}
			return nil
		}},
	} {
		for _, era := range []string{"modern", "legacy"} {
			t.Run(tc.name+"/"+era, func(t *testing.T) {
				p := startTamperProxy(t, ts.URL, uri, tc.mutate)
				r := inspectorVerify(t, npx, p.URL+"/mcp", era)
				t.Logf("Inspector (%s) through a proxy changing the %s of %s exited %d; stderr:\n%s", era, tc.name, uri, r.code, r.summary())
				p.mu.Lock()
				tampered, problems, before := p.tampered, p.problems, p.before
				p.mu.Unlock()
				for _, pr := range problems {
					t.Errorf("proxy: %s", pr)
				}
				if tampered == 0 {
					t.Fatalf("the proxy rewrote no skills/list result (Inspector exited %d):\n%s", r.code, r.summary())
				}
				t.Logf("the proxy rewrote %d skills/list results; the server's entry: %s", tampered, before[0])
				if r.code != inspectorNonconformant {
					t.Fatalf("Inspector exited %d, want %d (a %s mismatch)\nstderr:\n%s\nstdout:\n%s", r.code, inspectorNonconformant, tc.name, r.summary(), r.stdout)
				}
				var names []string
				for _, rep := range r.reports {
					names = append(names, rep.Name)
					if rep.Name != skillName {
						if !rep.OK || rep.Outcome != "verified" {
							t.Errorf("skill %s: ok %v, outcome %q; only %s was tampered with", rep.URI, rep.OK, rep.Outcome, skillName)
						}
						continue
					}
					if rep.OK || rep.Outcome != "failed" {
						t.Errorf("skill %s: ok %v, outcome %q, want failed", rep.URI, rep.OK, rep.Outcome)
					}
					seen := false
					for _, f := range rep.Files {
						switch {
						case f.URI == uri:
							seen = true
							if f.Status != "mismatch" {
								t.Errorf("%s is %q, want mismatch", uri, f.Status)
							}
							if err := tc.check(f); err != nil {
								t.Errorf("%s: %v", uri, err)
							}
						case f.Status != "verified":
							t.Errorf("%s is %q, want verified: only %s was tampered with", f.URI, f.Status, uri)
						}
					}
					if !seen {
						t.Errorf("the report of %s has no verdict on %s: %+v", skillName, uri, rep.Files)
					}
				}
				slices.Sort(names)
				if !slices.Equal(names, want) {
					t.Errorf("Inspector reported %v, want %v", names, want)
				}
				if t.Failed() {
					t.Logf("Inspector stdout:\n%s", r.stdout)
				}
			})
		}
	}
}
