//go:build linux

package main

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillserver/skillserver/internal/check"
	"github.com/skillserver/skillserver/internal/feed"
)

// loadTargets are what the load generator requests: the entry points,
// and the artifacts of two skills the editor never changes, so every
// answer but 200 and 304 is a failure.
type loadTargets struct {
	index, manifest           string
	archiveName               string
	archiveURL, archiveDigest string // a stable archive skill's content-addressed URL
	skillMDName               string
	skillMDURL, skillMDDigest string // a stable skill-md skill's SKILL.md at the RFC's conventional location
}

// pickTargets chooses the stable skills from the RFC index: the first
// archive and the first lone SKILL.md.
func pickTargets(base string, idx []check.RFCEntry) (loadTargets, error) {
	t := loadTargets{index: base + feed.DocRFCIndex.Patterns()[0], manifest: base + feed.DocManifest.Patterns()[0]}
	for _, e := range idx {
		switch {
		case e.Type == "archive" && t.archiveName == "":
			t.archiveName, t.archiveURL, t.archiveDigest = e.Name, e.URL, e.Digest
		case e.Type == "skill-md" && t.skillMDName == "":
			t.skillMDName, t.skillMDDigest = e.Name, e.Digest
			t.skillMDURL = base + "/.well-known/agent-skills/" + e.Name + "/SKILL.md"
		}
	}
	if t.archiveName == "" || t.skillMDName == "" {
		return t, fmt.Errorf("the RFC index of %d skills has no archive or no lone SKILL.md to load", len(idx))
	}
	return t, nil
}

// runLoad keeps conns connections busy until the soak's time is up, each
// cycling through the operations from its own offset; rate > 0 paces all
// of them together to that many requests a second.
func runLoad(s *soak, t loadTargets, conns int, rate float64) {
	const k = kindLoad
	hc := newHTTPClient(conns)
	var indexETag atomic.Value
	indexETag.Store("")
	expect := func(u string, a answer, ok bool, want ...int) bool {
		if !ok {
			return false
		}
		for _, w := range want {
			if a.status == w {
				return true
			}
		}
		s.fail(k, classStatus, u, fmt.Sprintf("answered %d for a skill the editor never changes: %s", a.status, snippet(a.body)))
		return false
	}
	index := func(hdr ...string) {
		a, ok := s.get(hc, k, t.index, hdr...)
		if expect(t.index, a, ok, http.StatusOK, http.StatusNotModified) && a.status == http.StatusOK && s.checkDocument(k, t.index, a) {
			indexETag.Store(a.etag)
		}
	}
	ops := []func(){
		func() { index() },
		func() {
			a, ok := s.get(hc, k, t.index, "Accept-Encoding", "gzip")
			// Without base_url a host's first request for a document
			// after a reload is answered uncompressed
			// (docs/http-api.md, "Compression of documents"); either
			// way the bytes sent hash to the ETag.
			if expect(t.index, a, ok, http.StatusOK) {
				if a.encoding != "gzip" && a.encoding != "" {
					s.fail(k, classInvalid, t.index, fmt.Sprintf("Content-Encoding %q to a gzip request for the index", a.encoding))
					return
				}
				s.checkDocument(k, t.index+" (gzip)", a)
			}
		},
		func() {
			if etag := indexETag.Load().(string); etag != "" {
				index("If-None-Match", etag)
			} else {
				index()
			}
		},
		func() {
			a, ok := s.get(hc, k, t.manifest)
			if expect(t.manifest, a, ok, http.StatusOK) {
				s.checkDocument(k, t.manifest, a)
			}
		},
		func() {
			a, ok := s.get(hc, k, t.archiveURL)
			if expect(t.archiveURL, a, ok, http.StatusOK) {
				s.checkArtifact(k, t.archiveURL, t.archiveDigest, a)
			}
		},
		func() {
			a, ok := s.get(hc, k, t.archiveURL, "If-None-Match", `"`+t.archiveDigest+`"`)
			if expect(t.archiveURL, a, ok, http.StatusNotModified) && a.etag != `"`+t.archiveDigest+`"` {
				s.fail(k, classDigest, t.archiveURL, fmt.Sprintf("304 with ETag %q, want %q", a.etag, `"`+t.archiveDigest+`"`))
			}
		},
		func() {
			a, ok := s.get(hc, k, t.skillMDURL)
			if expect(t.skillMDURL, a, ok, http.StatusOK) {
				s.checkArtifact(k, t.skillMDURL, t.skillMDDigest, a)
			}
		},
	}
	var tick <-chan time.Time
	if rate > 0 {
		ticker := time.NewTicker(time.Duration(float64(time.Second) / rate))
		defer ticker.Stop()
		tick = ticker.C
	}
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			for n := i; !s.stopping(); n++ {
				if tick != nil {
					select {
					case <-tick:
					case <-s.run.Done():
						return
					}
				}
				ops[n%len(ops)]()
			}
		})
	}
	wg.Wait()
}
