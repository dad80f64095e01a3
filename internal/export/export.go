// Package export writes a catalogue's static surfaces as files, for any
// static host or bucket: the RFC index, the scoped and legacy indexes,
// the native manifest tree, the agent card, the API catalog and the
// OpenAPI description, every artifact at its content-addressed path, and
// the latest-version files of the RFC and legacy layouts, a _headers file
// for the hosts that read one, and the HTML catalogue as static pages
// (internal/page renders them, as for serve). Every byte
// comes from internal/feed, the code the server answers with; the only
// difference is the links to routes only a running server answers
// (feed.Feed.Static), and the type a bucket stores a skill's HTML, SVG
// or XML file with (ArtifactType), since it cannot store serve's
// Content-Security-Policy.
//
// It owns the export's layout, its state file, the upload of what
// changed and the pruning of what no document names any more. It imports
// internal/feed, internal/page, internal/content and api; it must not import
// internal/catalog, internal/scan or internal/httpapi.
package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/skillserver/skillserver/api"
	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/page"
)

// Options says what to export.
type Options struct {
	// BaseURL is the public URL the export is served at, without a
	// trailing slash; every absolute URL in the documents starts with it.
	BaseURL string
	// APIURL is the base URL of a live server that answers the dynamic
	// routes (search, read API, update check, health); "" for none, and
	// the documents then do not link them. BaseURL itself means the
	// same origin routes them to a server (root-relative links, byte for
	// byte what the server publishes).
	APIURL string
	// PruneOlderThan, when positive, removes what earlier exports wrote
	// that no current document names and no export named for this long.
	PruneOlderThan time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Catalogue also writes the HTML catalogue as static pages
	// (page.Renderer.Static): the catalogue at index.html, every item's
	// pages, file views and comparisons, and their assets.
	Catalogue bool
	// ViewMaxBytes bounds the catalogue's file views and diffs as
	// catalogue_view_max_bytes does serve's; 0: no bound.
	ViewMaxBytes int64
}

// Ranks of File, in write order: each after what it links to.
const (
	rankArtifact        = iota // content-addressed, never changes
	rankLatest                 // latest-version files
	rankAsset                  // the pages' script, icon and logo, named by their digest
	rankSubagentVersion        // link artifacts
	rankSubagent               // a sub-agent's identity links its versions
	rankSubagentPage           // a page links identities
	rankSkillVersion           // may link a sub-agent's identity (routes_to_subagent)
	rankSkill
	rankSkillPage
	rankItem     // other per-item documents (scoped indexes, which link artifacts)
	rankEntry    // entry documents: indexes, the agent card, the description
	rankManifest // links the skill and sub-agent indexes
	rankCatalog  // the API catalog, which links the manifest and the description
	rankPage     // the HTML catalogue's pages, which link all of the above
)

// docRanks are the ranks of the documents of the native tree that link
// others of it; the other documents are rankItem or rankEntry.
var docRanks = map[feed.DocKind]int{
	feed.DocSubagentVersion: rankSubagentVersion,
	feed.DocSubagent:        rankSubagent,
	feed.DocSubagentPage:    rankSubagentPage,
	feed.DocSkillVersion:    rankSkillVersion,
	feed.DocSkill:           rankSkill,
	feed.DocSkillPage:       rankSkillPage,
	feed.DocManifest:        rankManifest,
}

// Files returns every file of the export of f (a snapshot's feed) for
// opts, sorted in write order, then by key.
func Files(f *feed.Feed, blobs page.Blobs, opts Options) ([]File, error) {
	if opts.BaseURL == "" {
		return nil, errors.New("export needs the base URL it will be served at (base_url)")
	}
	apiBase := opts.APIURL
	if apiBase == opts.BaseURL {
		apiBase = ""
	}
	v := f.Static(opts.APIURL != "", apiBase)
	base := feed.Base{URL: opts.BaseURL, Known: true}
	var out []File
	add := func(path string, body []byte, contentType, cache string, rank int) error {
		key, err := keyOf(path)
		if err != nil {
			return err
		}
		f := File{Key: key, Body: body, ContentType: contentType, CacheControl: cache, rank: rank}
		if rank <= rankLatest { // a skill's own file
			f.ContentType, f.ContentDisposition = ArtifactType(contentType)
		}
		out = append(out, f)
		return nil
	}
	blob := func(d content.Digest) ([]byte, error) {
		b, ok := blobs.Get(d)
		if !ok {
			return nil, fmt.Errorf("the snapshot advertises blob %s it does not hold", d)
		}
		return b, nil
	}
	for _, a := range v.ArtifactFiles() {
		b, err := blob(a.Digest)
		if err != nil {
			return nil, err
		}
		if err := add(a.Path(), b, a.ContentType(), feed.CacheImmutable, rankArtifact); err != nil {
			return nil, err
		}
	}
	for _, l := range v.LatestFiles() {
		b, err := blob(l.Digest)
		if err != nil {
			return nil, err
		}
		if err := add(l.Path, b, feed.ContentType(l.Name), feed.CacheShort, rankLatest); err != nil {
			return nil, err
		}
	}
	for _, key := range v.StaticKeys() {
		doc, ok := v.Document(base, key)
		if !ok {
			return nil, fmt.Errorf("document %s is listed but not rendered", key.Path())
		}
		paths := []string{key.Path()}
		entry := len(feed.Params(key.Kind.Patterns()[0])) == 0
		if entry {
			paths = key.Kind.Patterns() // the agent card and the AI catalogue answer at both paths
		}
		rank, ok := docRanks[key.Kind]
		switch {
		case ok:
		case entry:
			rank = rankEntry
		default:
			rank = rankItem
		}
		for _, p := range paths {
			if err := add(p, doc.Body, key.Kind.ContentType(), feed.CacheShort, rank); err != nil {
				return nil, err
			}
		}
	}
	catalog, err := feed.Encode(feed.APICatalog(opts.BaseURL, opts.APIURL))
	if err != nil {
		return nil, fmt.Errorf("encode the API catalog: %w", err)
	}
	if err := add(feed.PathAPICatalog, catalog, feed.APICatalogContentType, feed.CacheShort, rankCatalog); err != nil {
		return nil, err
	}
	if err := add(feed.PathOpenAPI, api.OpenAPI, feed.OpenAPIContentType, feed.CacheShort, rankEntry); err != nil {
		return nil, err
	}
	if err := add("/"+HeadersFile, hostHeaders(opts.Catalogue), HeadersContentType, feed.CacheShort, rankEntry); err != nil {
		return nil, err
	}
	if opts.Catalogue {
		for _, sf := range page.New(page.Options{MaxViewBytes: opts.ViewMaxBytes}).Static(v, blobs, base) {
			rank, cache := rankPage, feed.CacheShort
			if sf.Immutable {
				rank, cache = rankAsset, feed.CacheImmutable
			}
			if err := add(sf.File, sf.Body, sf.ContentType, cache, rank); err != nil {
				return nil, err
			}
		}
	}
	slices.SortFunc(out, func(a, b File) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return strings.Compare(a.Key, b.Key)
	})
	// Two paths of one export must not be one object.
	for i := 1; i < len(out); i++ {
		if out[i].Key == out[i-1].Key && !bytes.Equal(out[i].Body, out[i-1].Body) {
			return nil, fmt.Errorf("two files of the export at %q", out[i].Key)
		}
	}
	out = slices.CompactFunc(out, func(a, b File) bool { return a.Key == b.Key })
	return out, nil
}

// Result counts what an export did.
type Result struct {
	Files     int   // in the export
	Bytes     int64 // of those files
	Written   int   // new or changed, uploaded
	Metadata  int   // of Written, those whose bytes were right but not their attributes
	Unchanged int   // already there with the same bytes and attributes
	Pruned    int   // removed by PruneOlderThan
	Kept      int   // no longer named, kept until PruneOlderThan
	Failed    int   // could not be written; the rest was (Export's error names them)
	// Warnings are what the export left alone and why: a state file
	// entry not pruned because a symbolic link stands in its path, a file
	// not written. Each is one line.
	Warnings []string
}

// state is the StateFile's content. It changes only when what the
// documents name changes, so an export of an unchanged tree writes
// nothing at all.
type state struct {
	// Keys is every key the latest export wrote, sorted.
	Keys []string `json:"keys"`
	// Unnamed maps every key an earlier export wrote that the latest one
	// does not name to when the first export that did not name it ran
	// (RFC 3339, UTC): from then on, only clients holding an older
	// document can ask for it.
	Unnamed map[string]string `json:"unnamed_since"`
	// Named is the record 0.1.0 kept (every key to the last
	// time an export named it), read once and then replaced.
	Named map[string]string `json:"named,omitempty"`
}

// compareConcurrency is how many objects are compared at once: a bucket
// answers each in a round trip, so one at a time would make an export of
// an unchanged tree of 30,000 objects take minutes.
const compareConcurrency = 16

// Export writes files to t: what changed, in write order, then prunes and
// records the state.
func Export(ctx context.Context, t Target, files []File, opts Options) (Result, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	var st state
	switch b, ok, err := t.Read(ctx, StateFile); {
	case err != nil:
		return Result{}, fmt.Errorf("read %s: %w", StateFile, err)
	case ok:
		if err := json.Unmarshal(b, &st); err != nil {
			return Result{}, fmt.Errorf("%s is not an export state file (%w); remove it to start afresh", StateFile, err)
		}
	}
	start := now().UTC()
	stamp := start.Format(time.RFC3339)
	changes, err := compare(ctx, t, files)
	if err != nil {
		return Result{}, err
	}
	var res Result
	var failures []error
	current := make(map[string]bool, len(files))
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		current[f.Key] = true
		res.Files++
		res.Bytes += int64(len(f.Body))
		if changes[i] == Same {
			res.Unchanged++
			continue
		}
		if err := t.Write(ctx, f); err != nil {
			if ctx.Err() != nil {
				return res, fmt.Errorf("write %s: %w", f.Key, err)
			}
			// One file a target refuses (a name, a path a link or another
			// file stands in) is that file's problem: the others are
			// written, and the error comes at the end. A target that
			// refuses everything is not written to for long.
			err = fmt.Errorf("write %s: %w", f.Key, err)
			failures = append(failures, err)
			res.Failed++
			res.Warnings = append(res.Warnings, "not written: "+err.Error())
			if res.Failed >= maxFailures && res.Written == 0 {
				return res, fmt.Errorf("the first %d writes failed; stopped: %w", res.Failed, failures[0])
			}
			continue
		}
		res.Written++
		if changes[i] == Metadata {
			res.Metadata++
		}
	}
	if n := activeFiles(t, files); n != "" {
		res.Warnings = append(res.Warnings, n)
	}
	// Every key an export wrote, and since when no document names it.
	since := map[string]string{}
	for k, last := range st.Named {
		since[k] = last // the older record: the last export that named it
	}
	for _, k := range st.Keys {
		since[k] = stamp // named until this export
	}
	maps.Copy(since, st.Unnamed)
	next := state{Keys: slices.Sorted(maps.Keys(current)), Unnamed: map[string]string{}}
	for _, k := range slices.Sorted(maps.Keys(since)) {
		if current[k] {
			continue
		}
		t0, err := time.Parse(time.RFC3339, since[k])
		if err != nil {
			// A time that does not parse (a state file edited by hand)
			// counts from this export: a key is never pruned early.
			next.Unnamed[k] = stamp
			res.Kept++
			continue
		}
		if opts.PruneOlderThan <= 0 || start.Sub(t0) < opts.PruneOlderThan {
			next.Unnamed[k] = since[k]
			res.Kept++
			continue
		}
		if !validKey(k) {
			res.Warnings = append(res.Warnings, fmt.Sprintf("not pruned: %s names %q, which is not a path inside the output; it is forgotten", StateFile, k))
			continue
		}
		var link *linkError
		switch err := t.Delete(ctx, k); {
		case errors.As(err, &link):
			// Someone else's: the export never removes through a link,
			// and does not try again at every run.
			res.Warnings = append(res.Warnings, fmt.Sprintf("not pruned: %s: %v; it is forgotten", k, err))
			continue
		case err != nil:
			return res, fmt.Errorf("prune %s: %w", k, err)
		}
		res.Pruned++
	}
	b, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return res, err
	}
	sf := File{Key: StateFile, Body: append(b, '\n'), ContentType: feed.JSONContentType, CacheControl: "no-store"}
	switch c, err := t.Compare(ctx, sf); {
	case err != nil:
		return res, fmt.Errorf("compare %s: %w", StateFile, err)
	case c != Same:
		if err := t.Write(ctx, sf); err != nil {
			return res, fmt.Errorf("write %s: %w", StateFile, err)
		}
	}
	if len(failures) > 0 {
		return res, fmt.Errorf("%d of %d files were not written (each named in a warning; the rest was): %w", len(failures), len(files), failures[0])
	}
	return res, nil
}

// maxFailures is how many writes may fail, none succeeding, before the
// export stops: by then it is the target that fails, not one file.
const maxFailures = 10

// activeFiles returns a warning when t is a folder (or a file:// bucket,
// which a host serves as one) and files hold skill files a browser
// would run script in when a host serves them by extension with no
// Content-Security-Policy; "" otherwise.
func activeFiles(t Target, files []File) string {
	if !servedByExtension(t) {
		return ""
	}
	var active []string
	for _, f := range files {
		if f.rank <= rankLatest && activeExts[strings.ToLower(path.Ext(f.Key))] {
			active = append(active, f.Key)
		}
	}
	if len(active) == 0 {
		return ""
	}
	return fmt.Sprintf("%d files are HTML, SVG or XML a browser runs script in (%s first): a host that serves them by extension without the headers of docs/operations.md (\"Active content\") runs that script on its origin; GitHub Pages sets no such headers",
		len(active), active[0])
}

// compare compares every file with what t holds, compareConcurrency at
// a time; writes wait for all, so they still go in write order.
func compare(ctx context.Context, t Target, files []File) ([]Change, error) {
	changes := make([]Change, len(files))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(compareConcurrency)
	for i, f := range files {
		g.Go(func() error {
			c, err := t.Compare(ctx, f)
			if err != nil {
				return fmt.Errorf("compare %s: %w", f.Key, err)
			}
			changes[i] = c
			return nil
		})
	}
	return changes, g.Wait()
}
