//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/skillserver/skillserver/internal/check"
	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
)

// syncer is one verifying sync client. Like netclaw and
// Netclaw.SkillClient it keeps what it synced between passes: documents
// with their ETags (revalidated with If-None-Match; a 304 reuses the
// cached body) and the artifact URLs it has verified (not downloaded
// again). A cold pass forgets both, like a fresh install.
type syncer struct {
	s       *soak
	hc      *http.Client
	workers int

	mu   sync.Mutex
	docs map[string]cachedDoc
	have [nKinds]map[string]bool // verified artifact URLs, per feed
}

type cachedDoc struct {
	etag string
	body []byte
}

func newSyncer(s *soak, workers int) *syncer {
	c := &syncer{s: s, hc: newHTTPClient(workers + 1), workers: workers}
	c.reset()
	return c
}

// reset forgets every document and artifact: the next pass is cold.
func (c *syncer) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.docs = map[string]cachedDoc{}
	for i := range c.have {
		c.have[i] = map[string]bool{}
	}
}

func (c *syncer) has(k clientKind, u string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.have[k][u]
}

func (c *syncer) got(k clientKind, u string) {
	c.mu.Lock()
	c.have[k][u] = true
	c.mu.Unlock()
}

// loop runs passes until the soak's time is up, every coldEvery-th one
// (the first included) cold.
func (c *syncer) loop(coldEvery int) {
	for n := 0; !c.s.stopping(); n++ {
		cold := n%coldEvery == 0
		if cold {
			c.reset()
		}
		start := time.Now()
		rfc := c.rfcPass()
		if !c.s.stopping() && rfc {
			c.s.stats[kindRFC].pass(time.Since(start), cold)
		}
		start = time.Now()
		tree := c.treePass()
		if !c.s.stopping() && tree {
			c.s.stats[kindTree].pass(time.Since(start), cold)
		}
		if !rfc && !tree {
			// Both failed, likely at their entry points: the failures
			// are recorded; do not spin.
			select {
			case <-c.s.run.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// doc fetches a document, revalidating a cached copy. ok is false when
// there is nothing to use; a 404 is passed to soak.notFound with what
// and root when treeDoc, else it is an unexplained non-200.
func (c *syncer) doc(k clientKind, u, what string, root time.Time, treeDoc bool, v any) (sent time.Time, ok bool) {
	c.mu.Lock()
	cached, isCached := c.docs[u]
	c.mu.Unlock()
	hdr := []string{}
	if isCached {
		hdr = append(hdr, "If-None-Match", cached.etag)
	}
	a, ok := c.s.get(c.hc, k, u, hdr...)
	if !ok {
		return a.sent, false
	}
	body := a.body
	switch a.status {
	case http.StatusOK:
		if !c.s.checkDocument(k, u, a) {
			return a.sent, false
		}
		if treeDoc && c.s.edits.touched(what, root) {
			c.s.stats[k].afterEdit.Add(1)
		}
		c.mu.Lock()
		c.docs[u] = cachedDoc{etag: a.etag, body: a.body}
		c.mu.Unlock()
	case http.StatusNotModified:
		if !isCached || (a.etag != "" && a.etag != cached.etag) {
			c.s.fail(k, classStatus, u, fmt.Sprintf("304 with ETag %q to If-None-Match %q", a.etag, cached.etag))
			return a.sent, false
		}
		body = cached.body
	case http.StatusNotFound:
		if treeDoc {
			c.s.notFound(k, u, what, root, true)
		} else {
			c.s.fail(k, classStatus, u, "404 for an entry point")
		}
		return a.sent, false
	default:
		c.s.fail(k, classStatus, u, fmt.Sprintf("answered %d: %s", a.status, snippet(a.body)))
		return a.sent, false
	}
	if err := json.Unmarshal(body, v); err != nil {
		c.s.fail(k, classInvalid, u, "not a JSON document of the expected shape: "+err.Error())
		return a.sent, false
	}
	return a.sent, true
}

// artifact downloads one artifact and verifies it (soak.checkArtifact).
func (c *syncer) artifact(k clientKind, u, digest, what string, root time.Time) ([]byte, bool) {
	a, ok := c.s.get(c.hc, k, u)
	if !ok {
		return nil, false
	}
	switch a.status {
	case http.StatusOK:
	case http.StatusNotFound:
		c.s.notFound(k, u, what, root, false)
		return nil, false
	default:
		c.s.fail(k, classStatus, u, fmt.Sprintf("answered %d: %s", a.status, snippet(a.body)))
		return nil, false
	}
	if !c.s.checkArtifact(k, u, digest, a) {
		return nil, false
	}
	if c.s.edits.touched(what, root) {
		c.s.stats[k].afterEdit.Add(1)
	}
	return a.body, true
}

// each runs f(0..n-1) on the client's workers, stopping early when the
// soak's time is up.
func (c *syncer) each(n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(c.workers, n) {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := 0; i < n && !c.s.stopping(); i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// rfcPass reads the RFC index and downloads every artifact and resource
// it has not verified yet. It reports whether the pass ran to its end.
func (c *syncer) rfcPass() bool {
	const k = kindRFC
	u := c.s.base + feed.DocRFCIndex.Patterns()[0]
	var idx struct {
		Schema string           `json:"$schema"`
		Skills []check.RFCEntry `json:"skills"`
	}
	sent, ok := c.doc(k, u, "", time.Time{}, false, &idx)
	if !ok {
		return false
	}
	if idx.Schema != check.RFCSchema || idx.Skills == nil {
		c.s.fail(k, classInvalid, u, fmt.Sprintf("$schema %q with %d skills", idx.Schema, len(idx.Skills)))
		return false
	}
	c.each(len(idx.Skills), func(i int) { c.rfcEntry(idx.Skills[i], sent) })
	return !c.s.stopping()
}

// rfcEntry verifies one entry: the artifact, the archive's files, and
// each resource against its digest and against the archive's file.
func (c *syncer) rfcEntry(e check.RFCEntry, root time.Time) {
	const k = kindRFC
	done := c.has(k, e.URL)
	for _, r := range e.Resources {
		done = done && c.has(k, r.URL)
	}
	if done || c.s.stopping() {
		return
	}
	what := "skill:" + e.Name
	body, ok := c.artifact(k, e.URL, e.Digest, what, root)
	if !ok {
		return
	}
	if e.Type == "archive" {
		files, err := check.CheckZip(body)
		if err != nil {
			c.s.fail(k, classInvalid, e.URL, err.Error())
			return
		}
		listed := map[string]bool{"SKILL.md": true}
		for _, r := range e.Resources {
			listed[r.Path] = true
			if c.s.stopping() {
				return
			}
			rb, ok := c.artifact(k, r.URL, r.Digest, what, root)
			if !ok {
				return
			}
			if f, in := files[r.Path]; !in || content.Sum(f) != content.Sum(rb) {
				c.s.fail(k, classInvalid, r.URL, "the resource is not the archive's file "+r.Path)
				return
			}
			c.got(k, r.URL)
		}
		for p := range files {
			if !listed[p] {
				c.s.fail(k, classInvalid, e.URL, "the archive holds "+p+", which the entry's resources do not list")
				return
			}
		}
	}
	c.got(k, e.URL)
}

// treePass walks the native tree: manifest.json, then the skills tree
// and the sub-agent tree down to every version's artifact.
func (c *syncer) treePass() bool {
	const k = kindTree
	u := c.s.base + feed.DocManifest.Patterns()[0]
	var m struct {
		Versions map[string]map[string]struct {
			Href string `json:"href"`
		} `json:"versions"`
	}
	if _, ok := c.doc(k, u, "", time.Time{}, false, &m); !ok {
		return false
	}
	v1 := m.Versions["v1"]
	if v1["skills"].Href == "" {
		c.s.fail(k, classInvalid, u, "no versions.v1.skills href")
		return false
	}
	c.walk(c.resolve(v1["skills"].Href), "skill")
	if h := v1["subagents"].Href; h != "" && !c.s.stopping() {
		c.walk(c.resolve(h), "subagent")
	}
	return !c.s.stopping()
}

func (c *syncer) resolve(href string) string {
	if strings.HasPrefix(href, "/") {
		return c.s.base + href
	}
	if pu, err := url.Parse(href); err == nil && pu.IsAbs() {
		return href
	}
	return c.s.base + "/" + href
}

type treeIndex struct {
	Kind  string `json:"kind"`
	Pages []struct {
		Href string `json:"href"`
	} `json:"pages"`
}

type treePage struct {
	Kind  string `json:"kind"`
	Items []struct {
		Name string `json:"name"`
		Href string `json:"href"`
	} `json:"items"`
}

type identityDoc struct {
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Versions []struct {
		Version string `json:"version"`
		Href    string `json:"href"`
	} `json:"versions"`
}

// versionDoc is either tree's version document: a skill's wraps its
// artifact, a sub-agent's is flat.
type versionDoc struct {
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	URL      string `json:"url"`
	Digest   string `json:"digest"`
	Type     string `json:"type"`
	Artifact *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
		Type    string `json:"type"`
		URL     string `json:"url"`
		Digest  string `json:"digest"`
	} `json:"artifact"`
}

// walk follows a tree's index to its pages, each item's identity, each
// version document and its artifact. A page's request time is the root
// of everything reached from it (soak.notFound).
func (c *syncer) walk(indexURL, kindName string) {
	const k = kindTree
	var idx treeIndex
	sent, ok := c.doc(k, indexURL, "", time.Time{}, false, &idx)
	if !ok {
		return
	}
	if idx.Kind != kindName+"-index" {
		c.s.fail(k, classInvalid, indexURL, fmt.Sprintf("kind %q, want %s-index", idx.Kind, kindName))
		return
	}
	prefix := "skill:"
	if kindName == "subagent" {
		prefix = "agent:"
	}
	for _, p := range idx.Pages {
		if c.s.stopping() {
			return
		}
		pu := c.resolve(p.Href)
		var page treePage
		// A page is a tree document of no one item: the editor's adding
		// or deleting any item of the tree explains its 404.
		pageSent, ok := c.doc(k, pu, "tree:"+kindName, sent, true, &page)
		if !ok {
			continue
		}
		if page.Kind != kindName+"-page" {
			c.s.fail(k, classInvalid, pu, fmt.Sprintf("kind %q, want %s-page", page.Kind, kindName))
			continue
		}
		c.each(len(page.Items), func(i int) {
			it := page.Items[i]
			c.item(c.resolve(it.Href), kindName, prefix+it.Name, it.Name, pageSent)
		})
	}
}

// item verifies one identity document, its versions and their artifacts.
func (c *syncer) item(u, kindName, what, name string, root time.Time) {
	const k = kindTree
	var id identityDoc
	if _, ok := c.doc(k, u, what, root, true, &id); !ok {
		return
	}
	if id.Kind != kindName || id.Name != name {
		c.s.fail(k, classInvalid, u, fmt.Sprintf("kind %q name %q, the page says %s %s", id.Kind, id.Name, kindName, name))
		return
	}
	for _, v := range id.Versions {
		if c.s.stopping() {
			return
		}
		vu := c.resolve(v.Href)
		var d versionDoc
		if _, ok := c.doc(k, vu, what, root, true, &d); !ok {
			continue
		}
		au, digest, gotName, gotVersion, typ := d.URL, d.Digest, d.Name, d.Version, d.Type
		if d.Artifact != nil {
			au, digest, gotName, gotVersion, typ = d.Artifact.URL, d.Artifact.Digest, d.Artifact.Name, d.Artifact.Version, d.Artifact.Type
		}
		if d.Kind != kindName+"-version" || gotName != name || gotVersion != v.Version {
			c.s.fail(k, classInvalid, vu, fmt.Sprintf("kind %q, %s %s: the identity says %s %s", d.Kind, gotName, gotVersion, name, v.Version))
			continue
		}
		if c.has(k, au) {
			continue
		}
		body, ok := c.artifact(k, au, digest, what, root)
		if !ok {
			continue
		}
		if typ == "archive" {
			if _, err := check.CheckZip(body); err != nil {
				c.s.fail(k, classInvalid, au, err.Error())
				continue
			}
		}
		c.got(k, au)
	}
}
