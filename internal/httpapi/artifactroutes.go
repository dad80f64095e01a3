package httpapi

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
	"github.com/skillserver/skillserver/internal/transport"
)

// Artifact bytes: SKILL.md, archive.zip, resources and agent.md by name
// and version (pinned with ?digest= or not), the latest-version and
// legacy paths, and the content-addressed blobs and files the documents
// advertise. Where replaced bytes still are, the catalogue says (Locate).

// resolvedArtifact is what an resolvedArtifact route resolved to in the current snapshot.
type resolvedArtifact struct {
	key         catalog.ArtifactKey // retention key; zero for none
	digest      content.Digest      // "" when the current snapshot does not serve key
	contentType []string            // the Content-Type header's value, shared
	missing     error               // why the current snapshot does not serve it
	// install names the skill a download of this artifact installs
	// (SKILL.md or archive.zip); "" for other files.
	install string
}

// skillVersion resolves {name}/{version} in the view f; the error says
// what is missing.
func skillVersion(r *http.Request, f *feed.Feed) (name, version string, v *item.SkillVersion, err error) {
	name, ok1 := param(r, "name")
	version, ok2 := param(r, "version")
	sk, ok := f.Skill(name)
	if !ok1 || !ok2 || !ok {
		return name, version, nil, fmt.Errorf("%w: no skill named %q", errNotFound, name)
	}
	v, ok = sk.Version(version)
	if !ok {
		return name, version, nil, fmt.Errorf("%w: skill %q has no version %q", errNotFound, name, version)
	}
	return name, version, v, nil
}

func (s *Server) handleLatestSkillMD(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshotFor(w, r)
	if snap == nil {
		return
	}
	name, _ := param(r, "name")
	a := resolvedArtifact{contentType: markdownContentTypes}
	if sk, ok := viewOf(r, snap.Feed()).Skill(name); ok {
		a.digest, a.install = sk.Latest.SkillMD, name
	} else {
		a.missing = fmt.Errorf("%w: no skill named %q", errNotFound, name)
	}
	s.serveArtifact(w, r, snap, a)
}

func (s *Server) handleSkillMD(w http.ResponseWriter, r *http.Request) {
	s.handleSkillFile(w, r, skill.FileName)
}

func (s *Server) handleArchive(w http.ResponseWriter, r *http.Request) {
	s.handleSkillFile(w, r, feed.ArchiveFile)
}

func (s *Server) handleResource(w http.ResponseWriter, r *http.Request) {
	// The path is looked up in the snapshot, never joined onto a disk path,
	// so "..", encoded or not, can only miss.
	p, ok := param(r, "*")
	if !ok || p == "" {
		s.fail(w, r, fmt.Errorf("%w: no such file", errNotFound))
		return
	}
	s.handleSkillFile(w, r, p)
}

// handleSkillFile serves SKILL.md, archive.zip or a resource of a version.
func (s *Server) handleSkillFile(w http.ResponseWriter, r *http.Request, file string) {
	snap := s.snapshotFor(w, r)
	if snap == nil {
		return
	}
	f := viewOf(r, snap.Feed())
	name, version, v, err := skillVersion(r, f)
	a := resolvedArtifact{key: artifactKey(f, catalog.ArtifactKey{Name: name, Version: version, File: file}), contentType: contentTypeOf(file), missing: err}
	switch {
	case err != nil:
	case file == skill.FileName:
		a.digest, a.install = v.SkillMD, name
	case file == feed.ArchiveFile && v.Type == item.TypeArchive:
		a.digest, a.install = v.Archive, name
	case file == feed.ArchiveFile:
		a.missing = fmt.Errorf("%w: skill %q version %q is a lone SKILL.md and has no archive", errNotFound, name, version)
	default:
		if res, ok := v.Resource(file); ok {
			a.digest = res.Digest
		} else {
			a.missing = fmt.Errorf("%w: skill %q version %q has no file %q", errNotFound, name, version, file)
		}
	}
	s.serveArtifact(w, r, snap, a)
}

func (s *Server) handleAgentMD(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshotFor(w, r)
	if snap == nil {
		return
	}
	name, ok1 := param(r, "name")
	ver, ok2 := param(r, "version")
	f := viewOf(r, snap.Feed())
	a := resolvedArtifact{key: artifactKey(f, catalog.ArtifactKey{Agent: true, Name: name, Version: ver}), contentType: markdownContentTypes}
	if ag, ok := f.Agent(name); !ok1 || !ok2 || !ok {
		a.missing = fmt.Errorf("%w: no sub-agent named %q", errNotFound, name)
	} else if v, ok := ag.Version(ver); !ok {
		a.missing = fmt.Errorf("%w: sub-agent %q has no version %q", errNotFound, name, ver)
	} else {
		a.digest = v.Digest
	}
	s.serveArtifact(w, r, snap, a)
}

func (s *Server) handleBlob(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshotFor(w, r)
	if snap == nil {
		return
	}
	raw, _ := param(r, "digest")
	d, err := content.ParseDigest(raw)
	if err != nil {
		s.fail(w, r, fmt.Errorf("%w: %w", errBadRequest, err))
		return
	}
	// A scoped reader gets only the blobs of its own items, and none that
	// only retention still holds: those have no items left to check.
	found, ok := s.cat.Locate(snap, catalog.Lookup{Asks: catalog.AsksBlob, View: readerView(r), Digest: d})
	if !ok {
		s.fail(w, r, fmt.Errorf("%w: no blob %s", errNotFound, d))
		return
	}
	s.writeArtifact(w, r, found.Blob, d, octetStream, cacheImmutables, "")
}

// handleBlobFile serves a content-addressed file (feed.ArtifactPath): the
// bytes of digest under one of the names the view publishes them as,
// which gives the Content-Type. A file a reload replaced keeps answering
// from a retired snapshot that published it, or from retention, for the
// retention window, as a ?digest= pin does; then it is 404, never other
// bytes.
func (s *Server) handleBlobFile(w http.ResponseWriter, r *http.Request) {
	raw, _ := param(r, "digest")
	name, ok := param(r, "*")
	s.serveBlobFile(w, r, raw, name, ok)
}

// handleBlobFilePath is handleBlobFile for a request ServeHTTP routed
// by its path's prefix, without chi (blobFileOf).
func (s *Server) handleBlobFilePath(w http.ResponseWriter, r *http.Request) {
	digest, name, ok := blobFileOf(r.URL.Path)
	s.serveBlobFile(w, r, digest, name, ok)
}

// serveBlobFile answers handleBlobFile for the digest and name its path
// carried (ok false: a name that is not one).
func (s *Server) serveBlobFile(w http.ResponseWriter, r *http.Request, raw, name string, ok bool) {
	snap := s.snapshotFor(w, r)
	if snap == nil {
		return
	}
	d, err := content.ParseDigest(raw)
	if err != nil || !ok {
		s.fail(w, r, fmt.Errorf("%w: no such file", errNotFound))
		return
	}
	// A file a reload replaced answers from a retired snapshot that
	// published it, or from retention: the same window as ?digest=.
	found, ok := s.cat.Locate(snap, catalog.Lookup{Asks: catalog.AsksFile, View: readerView(r), Digest: d, Name: name})
	if !ok {
		s.fail(w, r, fmt.Errorf("%w: no file %q with digest %s", errNotFound, name, d))
		return
	}
	s.writeArtifact(w, r, found.Blob, d, contentTypeOf(name), cacheImmutables, found.Install)
}

// artifactKey is k, or no key when the view f does not hold k's item:
// retention must not serve a reader bytes of items it cannot see.
func artifactKey(f *feed.Feed, k catalog.ArtifactKey) catalog.ArtifactKey {
	if !f.Allows(k.Name) {
		return catalog.ArtifactKey{}
	}
	return k
}

// serveArtifact writes an artifact. A `digest` query parameter pins the
// request: it is answered with exactly those bytes while the current
// snapshot, or one retired within the retention window, served them at
// this path, and 404 otherwise, never other bytes. Pinned responses may be
// cached forever.
func (s *Server) serveArtifact(w http.ResponseWriter, r *http.Request, snap *catalog.Snapshot, a resolvedArtifact) {
	var body content.Blob
	var ok bool
	var cache []string
	if q, pinned := transport.Query(w, r)["digest"]; pinned {
		want, err := content.ParseDigest(q[0])
		if err != nil {
			s.fail(w, r, fmt.Errorf("%w: digest parameter: %w", errBadRequest, err))
			return
		}
		var found catalog.Found
		found, ok = s.cat.Locate(snap, catalog.Lookup{Asks: catalog.AsksPinned, Digest: want, Key: a.key, Served: a.digest})
		if !ok {
			s.fail(w, r, fmt.Errorf("%w: %s is not served here (any more)", errNotFound, want))
			return
		}
		body, a.digest = found.Blob, want
		cache = cacheImmutables
	} else {
		if a.digest == "" {
			s.fail(w, r, a.missing)
			return
		}
		if body, ok = snap.Store.Blob(a.digest); !ok {
			s.fail(w, r, fmt.Errorf("snapshot %d advertises blob %s it does not hold", snap.Generation, a.digest))
			return
		}
		cache = cacheShorts
	}
	s.writeArtifact(w, r, body, a.digest, a.contentType, cache, a.install)
}

// writeArtifact answers with artifact bytes body of digest d: its
// Content-Type and Cache-Control, the digest as ETag, the artifact
// security headers; and when it answered a GET with the whole body (a
// 200: not HEAD, a Range, a revalidation's 304 or a failed
// precondition), a download of install's artifact counted (none when
// install is "").
func (s *Server) writeArtifact(w http.ResponseWriter, r *http.Request, body content.Blob, d content.Digest, contentType, cacheControl []string, install string) {
	h := w.Header()
	h["Cache-Control"] = cacheControl
	h["Content-Type"] = contentType
	h["Etag"] = transport.ETagValue(w, d.ETag())
	setArtifactSecurity(h)
	if !s.serveBlob(w, r, body) {
		return
	}
	if install != "" && r.Method == http.MethodGet && transport.Status(w) == http.StatusOK {
		s.installs.add(install)
	}
}

// setArtifactSecurity keeps served files inert: an .html or .svg resource
// opened in a browser runs no script on this origin, and nothing sniffs a
// type other than the one sent.
func setArtifactSecurity(h http.Header) {
	h["X-Content-Type-Options"] = nosniff
	h["Content-Security-Policy"] = sandboxed
}

// contentTypeValues holds feed.ContentType's media types as header
// values, one shared slice each (the table is fixed, so it stays small).
var contentTypeValues sync.Map

// contentTypeOf is p's Content-Type header value (a shared one).
func contentTypeOf(p string) []string {
	ct := feed.ContentType(p)
	if v, ok := contentTypeValues.Load(ct); ok {
		return v.([]string)
	}
	v, _ := contentTypeValues.LoadOrStore(ct, []string{ct})
	return v.([]string)
}

// handleLegacyFile serves /.well-known/skills/{name}/{path}: a file of the
// skill's latest version, for v0.1 readers.
func (s *Server) handleLegacyFile(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshotFor(w, r)
	if snap == nil {
		return
	}
	name, _ := param(r, "name")
	file, ok := param(r, "*")
	a := resolvedArtifact{contentType: contentTypeOf(file)}
	sk, found := viewOf(r, snap.Feed()).Skill(name)
	switch {
	case !found || !ok:
		a.missing = fmt.Errorf("%w: no skill named %q", errNotFound, name)
	case file == skill.FileName:
		a.digest, a.install = sk.Latest.SkillMD, name
	default:
		if res, ok := sk.Latest.Resource(file); ok {
			a.digest = res.Digest
		} else {
			a.missing = fmt.Errorf("%w: skill %q has no file %q", errNotFound, name, file)
		}
	}
	s.serveArtifact(w, r, snap, a)
}
