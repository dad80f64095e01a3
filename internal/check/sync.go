// Package check is a model client of skill servers and a conformance
// check built on it. The Client syncs from a feed the way netclaw's daemon
// and the Netclaw.SkillClient library do, request by request, and fails on
// anything they would reject; tests run it against the real server. Run
// walks any skill server with the same Client, adds what the other clients
// (the skills CLI, legacy readers, A2A gateways) rely on, and reports every
// broken rule by item and URL: `skillserver check`.
//
// It reads feeds only over HTTP and must not import the server's catalog,
// scan or HTTP packages. It uses internal/feed and internal/item for the
// published constants (paths, $schema URLs, version order), internal/skill
// for front matter (netclaw's agent-md rules are those by design) and
// internal/content for digests.
package check

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// RFCSchema is the only $schema RFC clients accept.
const RFCSchema = feed.RFCSchema

// Bounds clients apply to archives (the skills CLI's: 50 MiB, 1000
// entries), and the default bound on one response.
const (
	MaxArchiveBytes = 50 << 20
	MaxArchiveFiles = 1000
	DefaultMaxBytes = 64 << 20
)

// Violation is one broken rule: what, where and why. Every error the
// Client returns is one, or several joined.
type Violation struct {
	Rule   Rule
	Item   string // "skill code-review 1.0.0", "RFC index", ...
	URL    string
	Msg    string
	Status int // the HTTP status, for RuleStatus
	// cause is the error a RuleFetch violation reports, to tell a server
	// that does not answer at all (unreachable) from one request failing.
	cause error
}

func (v *Violation) Error() string {
	var b strings.Builder
	if v.Item != "" {
		b.WriteString(v.Item + ": ")
	}
	b.WriteString(v.Msg)
	if v.URL != "" {
		b.WriteString(" (" + v.URL + ")")
	}
	return b.String() + " [" + string(v.Rule) + "]"
}

func bad(rule Rule, format string, args ...any) *Violation {
	return &Violation{Rule: rule, Msg: fmt.Sprintf(format, args...)}
}

// at fills in the item and URL of err's violations where they have none.
func at(err error, itemName, u string) error {
	var v *Violation
	if errors.As(err, &v) {
		if v.Item == "" {
			v.Item = itemName
		}
		if v.URL == "" {
			v.URL = u
		}
	}
	return err
}

// Synced is what a client recorded for one item after a pass.
type Synced struct {
	Version string
	Digest  string
	Files   map[string][]byte // skill: path -> bytes; agent: "agent.md"; nil in a check
	// Sums are the digests of Files, which a check keeps instead of the
	// bytes, so its memory does not grow with the catalogue.
	Sums map[string]content.Digest
}

func synced(version, digest string, files map[string][]byte, keep bool) Synced {
	s := Synced{Version: version, Digest: digest, Sums: make(map[string]content.Digest, len(files))}
	for p, b := range files {
		s.Sums[p] = content.Sum(b)
	}
	if keep {
		s.Files = files
	}
	return s
}

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
	// MaxBytes bounds the bytes read of one response; 0 is DefaultMaxBytes.
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
	body, err := readBounded(resp.Body, c.maxBytes())
	switch {
	case errors.Is(err, errTooLarge):
		return nil, &Violation{Rule: RuleSize, Item: itemName, URL: u, Msg: fmt.Sprintf("response is over %d bytes", c.maxBytes())}
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

func readBounded(r io.Reader, n int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, n+1))
	if err == nil && int64(len(b)) > n {
		return nil, errTooLarge
	}
	return b, err
}

func (c *Client) maxBytes() int64 {
	if c.MaxBytes > 0 {
		return c.MaxBytes
	}
	return DefaultMaxBytes
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

// artifact downloads and verifies one skill version's artifact: digest,
// type, archive rules, UTF-8 and the front matter name. It returns the
// version's files.
func (c *Client) artifact(ctx context.Context, itemName, name, typ, u, digest string) (map[string][]byte, error) {
	as := mediaMarkdown
	switch typ {
	case string(item.TypeArchive):
		as = mediaZip
	case string(item.TypeSkillMD):
	default:
		return nil, &Violation{Rule: RuleType, Item: itemName, URL: u, Msg: fmt.Sprintf("unknown type %q: want skill-md or archive", typ)}
	}
	body, err := c.download(ctx, itemName, u, digest, as)
	if err != nil {
		return nil, err
	}
	var files map[string][]byte
	if as == mediaZip {
		if files, err = CheckZip(body); err != nil {
			return nil, at(err, itemName, u)
		}
	} else {
		files = map[string][]byte{skill.FileName: body}
	}
	if err := checkSkillMD(name, files[skill.FileName]); err != nil {
		return nil, at(err, itemName, u)
	}
	return files, nil
}

// parseLimits are the front matter bounds of the files check parses: only
// the problem list is bounded, so a remote file can make no long one; the
// size limits are the server's own business.
var parseLimits = skill.Limits{MaxValueProblems: skill.DefaultMaxValueProblems}

// checkSkillMD requires strict UTF-8 and front matter naming the skill
// as advertised.
func checkSkillMD(name string, b []byte) error {
	if !utf8.Valid(b) {
		return bad(RuleText, "SKILL.md is not valid UTF-8")
	}
	s, _ := skill.ParseSkill(skill.FileName, name, b, parseLimits)
	if s.Name != name {
		return bad(RuleFrontmatter, "SKILL.md front matter name is %q, the feed advertises %q", s.Name, name)
	}
	return nil
}

// Resource is one file of an archive skill, as the RFC entry lists it.
type Resource struct {
	Path     string `json:"path"`
	Digest   string `json:"digest"`
	URL      string `json:"url"`
	UnixMode int    `json:"unixMode"`
}

// RFCEntry is one skill of the RFC index.
type RFCEntry struct {
	Name        string     `json:"name"`
	Type        string     `json:"type"`
	Description string     `json:"description"`
	URL         string     `json:"url"`
	Digest      string     `json:"digest"`
	Version     string     `json:"version"`
	Resources   []Resource `json:"resources"`
}

func (e RFCEntry) item() string { return "skill " + e.Name + " " + e.Version }

// SyncSkills is netclaw's RFC pass: read the index, skip skills whose
// (version, digest) are unchanged, download and verify the rest.
func (c *Client) SyncSkills(ctx context.Context) ([]RFCEntry, error) {
	const itemName = "RFC index"
	u := c.entry(feed.DocRFCIndex.Patterns()[0])
	var idx struct {
		Schema string     `json:"$schema"`
		Skills []RFCEntry `json:"skills"`
	}
	if err := c.getJSON(ctx, itemName, u, mediaEntry, &idx); err != nil {
		return nil, err
	}
	if idx.Schema != RFCSchema {
		return nil, &Violation{Rule: RuleSchema, Item: itemName, URL: u, Msg: fmt.Sprintf("$schema is %q, want %q byte for byte (the skills CLI drops the whole index)", idx.Schema, RFCSchema)}
	}
	if idx.Skills == nil {
		return nil, &Violation{Rule: RuleJSON, Item: itemName, URL: u, Msg: "skills is missing or null, want a list"}
	}
	errs := make([]error, len(idx.Skills))
	seen := map[string]bool{}
	var todo []int
	for i, e := range idx.Skills {
		if err := checkEntry(e, seen); err != nil {
			errs[i] = at(err, e.item(), u)
			continue
		}
		todo = append(todo, i)
	}
	c.each(len(todo), func(j int) {
		e := idx.Skills[todo[j]]
		errs[todo[j]] = c.syncSkill(ctx, e)
		if c.obs != nil {
			c.obs.itemDone()
		}
	})
	return idx.Skills, errors.Join(errs...)
}

// checkEntry applies the skills CLI's rules for an entry it keeps.
func checkEntry(e RFCEntry, seen map[string]bool) error {
	switch {
	case !skill.ValidName(e.Name):
		return bad(RuleName, "invalid name %q: want lower-case letters, digits and single hyphens, at most %d characters", e.Name, skill.MaxNameLen)
	case seen[e.Name]:
		return bad(RuleName, "listed twice")
	case skill.TextLen(e.Description) > skill.MaxDescriptionLen || strings.TrimSpace(e.Description) == "":
		return bad(RuleDescription, "description empty or over %d characters (UTF-16 units, as the skills CLI counts)", skill.MaxDescriptionLen)
	case e.Version == "":
		return bad(RuleVersion, "no version (netclaw's change detection needs it)")
	case e.Type == string(item.TypeSkillMD) && len(e.Resources) > 0:
		return bad(RuleType, "type skill-md, yet it lists resources: a skill with files besides SKILL.md is an archive")
	}
	seen[e.Name] = true
	return nil
}

func (c *Client) syncSkill(ctx context.Context, e RFCEntry) error {
	c.mu.Lock()
	prev, ok := c.Skills[e.Name]
	c.mu.Unlock()
	if ok && prev.Version == e.Version && prev.Digest == e.Digest {
		return nil
	}
	files, err := c.artifact(ctx, e.item(), e.Name, e.Type, e.URL, e.Digest)
	if err != nil {
		return err
	}
	if c.obs != nil {
		if err := c.checkResources(ctx, e, files); err != nil {
			return err
		}
	}
	c.mu.Lock()
	c.Skills[e.Name] = synced(e.Version, e.Digest, files, c.obs == nil)
	c.mu.Unlock()
	return nil
}

// checkResources downloads every resource an archive entry lists and
// requires it to be the archive's file of that path.
func (c *Client) checkResources(ctx context.Context, e RFCEntry, files map[string][]byte) error {
	if e.Type != string(item.TypeArchive) || e.Resources == nil {
		return nil // resources are an extension; a feed may leave them out
	}
	var errs []error
	listed := map[string]bool{}
	for _, r := range e.Resources {
		listed[r.Path] = true
		itemName := e.item() + " " + r.Path
		if _, err := c.download(ctx, itemName, r.URL, r.Digest, mediaFile); err != nil {
			errs = append(errs, err)
			continue
		}
		if f, ok := files[r.Path]; !ok || content.Sum(f).String() != r.Digest {
			errs = append(errs, &Violation{Rule: RuleConsistency, Item: itemName, URL: r.URL, Msg: "the resource is not the archive's file of that path"})
		}
	}
	for p := range files {
		if p != skill.FileName && !listed[p] {
			errs = append(errs, &Violation{Rule: RuleConsistency, Item: e.item(), URL: e.URL, Msg: fmt.Sprintf("the archive holds %s, which resources does not list", p)})
		}
	}
	return errors.Join(errs...)
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

// textExt are the files netclaw requires to be strict UTF-8 in an archive.
var textExt = map[string]bool{".md": true, ".txt": true, ".json": true, ".yaml": true, ".yml": true, ".sh": true, ".py": true}

// CheckZip applies netclaw's and the skills CLI's archive rules and
// returns the files.
func CheckZip(b []byte) (map[string][]byte, error) {
	if len(b) > MaxArchiveBytes {
		return nil, bad(RuleZipSize, "archive is %d bytes, over the %d clients accept", len(b), MaxArchiveBytes)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, bad(RuleZipSize, "archive is not a zip: %v", err)
	}
	if len(zr.File) > MaxArchiveFiles {
		return nil, bad(RuleZipSize, "archive has %d entries, over the %d clients accept", len(zr.File), MaxArchiveFiles)
	}
	files := map[string][]byte{}
	folded := map[string]bool{}
	var total int64
	for _, f := range zr.File {
		name := f.Name
		if err := checkPath("entry", name); err != nil {
			return nil, err
		}
		mode := f.Mode()
		if mode&^0o777 != 0 {
			return nil, bad(RuleZipEntry, "entry %q: mode %v is not a plain file within 0777 (clients refuse symlinks and devices)", name, mode)
		}
		low := strings.ToLower(name)
		if folded[low] {
			return nil, bad(RuleZipPath, "entry %q: two paths equal ignoring case", name)
		}
		folded[low] = true
		rc, err := f.Open()
		if err != nil {
			return nil, bad(RuleZipSize, "entry %q: %v", name, err)
		}
		data, err := io.ReadAll(io.LimitReader(rc, MaxArchiveBytes-total+1))
		rc.Close()
		if err != nil {
			return nil, bad(RuleZipSize, "entry %q: %v", name, err)
		}
		if total += int64(len(data)); total > MaxArchiveBytes {
			return nil, bad(RuleZipSize, "archive expands to over %d bytes", MaxArchiveBytes)
		}
		if (name == skill.FileName || textExt[strings.ToLower(path.Ext(name))]) && !utf8.Valid(data) {
			return nil, bad(RuleZipContent, "entry %q: not valid UTF-8", name)
		}
		files[name] = data
	}
	if _, ok := files[skill.FileName]; !ok {
		return nil, bad(RuleZipContent, "no SKILL.md at the archive root")
	}
	return files, nil
}

// checkPath applies the rules for a path a client writes to disk.
func checkPath(what, name string) error {
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") {
		return bad(RuleZipPath, "%s %q: absolute or malformed path", what, name)
	}
	for seg := range strings.SplitSeq(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return bad(RuleZipPath, "%s %q: empty, . or .. segment", what, name)
		}
	}
	return nil
}

type treeIndex struct {
	Kind  string `json:"kind"`
	Pages []struct {
		Range string `json:"range"`
		Href  string `json:"href"`
	} `json:"pages"`
}

type treePage struct {
	Kind  string     `json:"kind"`
	Items []pageItem `json:"items"`
}

type pageItem struct {
	Name          string `json:"name"`
	LatestVersion string `json:"latestVersion"`
	VersionRange  struct {
		Min   string `json:"min"`
		Max   string `json:"max"`
		Count int    `json:"count"`
	} `json:"versionRange"`
	Href string `json:"href"`
}

type identity struct {
	Kind          string `json:"kind"`
	Name          string `json:"name"`
	LatestVersion string `json:"latestVersion"`
	Versions      []struct {
		Version     string `json:"version"`
		PublishedAt string `json:"publishedAt"`
		Digest      string `json:"digest"`
		Href        string `json:"href"`
	} `json:"versions"`
}

func checkHref(h string) error {
	if !strings.HasPrefix(h, "/") {
		return bad(RuleHref, "href %q is not root-relative (netclaw would prefix it with api/v1/)", h)
	}
	return nil
}

// checkOrder requires versions newest first, in the feed's version order.
func checkOrder(id identity) error {
	got := make([]string, len(id.Versions))
	for i, v := range id.Versions {
		got[i] = v.Version
	}
	want := slices.Clone(got)
	if len(want) > 0 {
		item.OrderVersions(want, func(s string) string { return s })
	}
	if !slices.Equal(got, want) {
		return bad(RuleVersionOrder, "versions %s are not newest first (%s)", strings.Join(got, ", "), strings.Join(want, ", "))
	}
	return nil
}

// walkTree follows index -> pages -> items -> identity for one collection
// and calls visit with each item's identity document.
func (c *Client) walkTree(ctx context.Context, indexURL, kind string, visit func(name string, id identity) error) error {
	treeName := kind + " tree"
	var idx treeIndex
	if err := c.getJSON(ctx, treeName, indexURL, mediaEntry, &idx); err != nil {
		return err
	}
	if idx.Kind != kind+"-index" {
		return &Violation{Rule: RuleKind, Item: treeName, URL: indexURL, Msg: fmt.Sprintf("kind %q, want %q", idx.Kind, kind+"-index")}
	}
	var errs []error
	for _, p := range idx.Pages {
		pageName := kind + " page " + p.Range
		if err := checkHref(p.Href); err != nil {
			errs = append(errs, at(err, pageName, indexURL))
			continue
		}
		pu := c.resolve(p.Href)
		var page treePage
		if err := c.getJSON(ctx, pageName, pu, mediaJSON, &page); err != nil {
			errs = append(errs, err)
			continue
		}
		if page.Kind != kind+"-page" {
			errs = append(errs, &Violation{Rule: RuleKind, Item: pageName, URL: pu, Msg: fmt.Sprintf("kind %q, want %q", page.Kind, kind+"-page")})
			continue
		}
		itemErrs := make([]error, len(page.Items))
		c.each(len(page.Items), func(i int) {
			itemErrs[i] = c.walkItem(ctx, pu, kind, page.Items[i], visit)
			if c.obs != nil {
				c.obs.itemDone()
			}
		})
		errs = append(errs, itemErrs...)
	}
	return errors.Join(errs...)
}

func (c *Client) walkItem(ctx context.Context, pageURL, kind string, it pageItem, visit func(name string, id identity) error) error {
	itemName := kind + " " + it.Name
	if err := checkHref(it.Href); err != nil {
		return at(err, itemName, pageURL)
	}
	iu := c.resolve(it.Href)
	var id identity
	if err := c.getJSON(ctx, itemName, iu, mediaJSON, &id); err != nil {
		return err
	}
	fail := func(rule Rule, format string, args ...any) error {
		return &Violation{Rule: rule, Item: itemName, URL: iu, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case id.Kind != kind:
		return fail(RuleKind, "kind %q, want %q", id.Kind, kind)
	case id.Name != it.Name:
		return fail(RuleName, "name %q, the page says %q", id.Name, it.Name)
	}
	if err := checkOrder(id); err != nil {
		return at(err, itemName, iu)
	}
	if c.Strict {
		switch {
		case id.LatestVersion != it.LatestVersion:
			return fail(RuleConsistency, "latestVersion %q, the page says %q", id.LatestVersion, it.LatestVersion)
		case len(id.Versions) != it.VersionRange.Count || len(id.Versions) == 0 ||
			id.Versions[0].Version != it.VersionRange.Max || id.Versions[len(id.Versions)-1].Version != it.VersionRange.Min:
			return fail(RuleConsistency, "versions disagree with the page's versionRange")
		}
	}
	// netclaw takes the version the page named as latest.
	n := 0
	for _, v := range id.Versions {
		if v.Version == it.LatestVersion {
			n++
		}
	}
	if n != 1 && !c.Strict {
		c.count(&c.Skipped)
		return nil
	}
	if n != 1 {
		return fail(RuleVersion, "%d versions equal the page's latestVersion %q, want exactly 1", n, it.LatestVersion)
	}
	id.LatestVersion = it.LatestVersion
	return visit(it.Name, id)
}

// SyncAgents is netclaw's sub-agent pass, straight to the tree at the host
// root. After a clean pass it prunes every agent the server no longer
// lists, as netclaw does.
func (c *Client) SyncAgents(ctx context.Context) error {
	var mu sync.Mutex
	listed := map[string]bool{}
	indexURL := c.entry(feed.DocSubagentIndex.Patterns()[0])
	err := c.walkTree(ctx, indexURL, "subagent", func(name string, id identity) error {
		mu.Lock()
		listed[name] = true
		mu.Unlock()
		if c.obs != nil {
			c.obs.countVersions(0, len(id.Versions))
		}
		for _, v := range id.Versions {
			// netclaw syncs the latest version; the check verifies all.
			latest := v.Version == id.LatestVersion
			if !latest && c.obs == nil {
				continue
			}
			itemName := "subagent " + name + " " + v.Version
			if err := checkHref(v.Href); err != nil {
				return at(err, itemName, c.resolve("/"))
			}
			du := c.resolve(v.Href)
			var d struct {
				Kind, Name, Version, Type, Description, URL, Digest string
			}
			if err := c.getJSON(ctx, itemName, du, mediaJSON, &d); err != nil {
				return err
			}
			// netclaw checks the detail's kind, type and name, then the
			// download against the detail's digest; the identity's digest
			// may be older when a reload fell between the two requests.
			fail := func(rule Rule, format string, args ...any) error {
				return &Violation{Rule: rule, Item: itemName, URL: du, Msg: fmt.Sprintf(format, args...)}
			}
			switch {
			case d.Kind != "subagent-version":
				return fail(RuleKind, "kind %q, want subagent-version", d.Kind)
			case d.Type != "agent-md":
				return fail(RuleType, "type %q, want agent-md", d.Type)
			case d.Name != name || d.Version != v.Version:
				return fail(RuleName, "name %q version %q, the identity says %s %s", d.Name, d.Version, name, v.Version)
			case c.Strict && d.Digest != v.Digest:
				return fail(RuleConsistency, "digest %s, the identity says %s", d.Digest, v.Digest)
			}
			c.mu.Lock()
			prev, ok := c.Agents[name]
			c.mu.Unlock()
			if latest && ok && prev.Version == d.Version && prev.Digest == d.Digest {
				continue
			}
			body, err := c.download(ctx, itemName, d.URL, d.Digest, mediaMarkdown)
			if err != nil {
				return err
			}
			// netclaw sets no limits; the violation still quotes a bounded
			// number of a hostile file's problems.
			a, ps := skill.ParseAgent(d.URL, name, body, parseLimits)
			switch {
			case a.Name != name && a.Name != "":
				return &Violation{Rule: RuleFrontmatter, Item: itemName, URL: d.URL, Msg: fmt.Sprintf("agent file front matter name is %q, the feed advertises %q", a.Name, name)}
			case skill.HasError(ps) || a.Name != name:
				return &Violation{Rule: RuleText, Item: itemName, URL: d.URL, Msg: fmt.Sprintf("agent file rejected: %v", ps)}
			}
			if latest {
				c.mu.Lock()
				c.Agents[name] = synced(d.Version, d.Digest, map[string][]byte{feed.AgentFile: body}, c.obs == nil)
				c.mu.Unlock()
			}
		}
		return nil
	})
	var v *Violation
	if errors.As(err, &v) && v.Rule == RuleStatus && v.Status == http.StatusNotFound && v.URL == indexURL {
		c.AgentsAbsent = true
		return nil
	}
	if err != nil {
		return err
	}
	c.AgentsAbsent = false
	for name := range c.Agents {
		if !listed[name] {
			delete(c.Agents, name)
		}
	}
	return nil
}

// WalkManifest is the SkillClient's walk: /manifest.json, versions.v1, the
// skills tree down to every version document. Each latest version's
// artifact must equal the RFC entry field for field, and every version's
// artifact must download and verify.
func (c *Client) WalkManifest(ctx context.Context, rfc []RFCEntry) error {
	const itemName = "manifest"
	mu := c.entry(feed.DocManifest.Patterns()[0])
	var m struct {
		Schema     string `json:"$schema"`
		APIVersion string `json:"apiVersion"`
		Versions   map[string]map[string]struct {
			Href string `json:"href"`
		} `json:"versions"`
	}
	if err := c.getJSON(ctx, itemName, mu, mediaEntry, &m); err != nil {
		var v *Violation
		if c.obs != nil && errors.As(err, &v) && v.Rule == RuleStatus && v.Status == http.StatusNotFound {
			c.obs.warn(&Violation{Rule: RuleAbsent, Item: itemName, URL: mu, Msg: "no native manifest (404): Netclaw.SkillClient cannot use this feed; RFC clients and netclaw's sync can"})
			return nil
		}
		return err
	}
	if c.obs != nil && m.Schema != feed.ManifestSchema {
		c.obs.warn(&Violation{Rule: RuleManifestSchema, Item: itemName, URL: mu, Msg: fmt.Sprintf("$schema is %q, want %q", m.Schema, feed.ManifestSchema)})
	}
	v1, ok := m.Versions["v1"]
	if !ok {
		return &Violation{Rule: RuleJSON, Item: itemName, URL: mu, Msg: "no versions.v1 (Netclaw.SkillClient throws)"}
	}
	for _, key := range []string{"self", "skills"} {
		if err := checkHref(v1[key].Href); err != nil {
			return at(err, itemName+" "+key, mu)
		}
	}
	// A nil rfc is an RFC index that failed as a whole: nothing to
	// compare with.
	var byName map[string]RFCEntry
	if rfc != nil {
		byName = map[string]RFCEntry{}
		for _, e := range rfc {
			byName[e.Name] = e
		}
	}
	var fmu sync.Mutex
	found := map[string]bool{}
	err := c.walkTree(ctx, c.resolve(v1["skills"].Href), "skill", func(name string, id identity) error {
		fmu.Lock()
		found[name] = true
		fmu.Unlock()
		if c.obs != nil {
			c.obs.countVersions(len(id.Versions), 0)
		}
		var errs []error
		for _, v := range id.Versions {
			if err := c.skillVersion(ctx, name, v.Version, v.Digest, v.Href, v.Version == id.LatestVersion, byName); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	})
	if err != nil || !c.Strict || byName == nil {
		return err
	}
	var errs []error
	for _, e := range rfc {
		if !found[e.Name] {
			errs = append(errs, &Violation{Rule: RuleConsistency, Item: "skill " + e.Name, URL: c.resolve(v1["skills"].Href), Msg: "the RFC index lists it, the native tree does not"})
		}
	}
	for name := range found {
		if _, ok := byName[name]; !ok {
			errs = append(errs, &Violation{Rule: RuleConsistency, Item: "skill " + name, URL: c.entry(feed.DocRFCIndex.Patterns()[0]), Msg: "the native tree lists it, the RFC index does not"})
		}
	}
	return errors.Join(errs...)
}

// skillVersion checks one skill-version document and its artifact.
func (c *Client) skillVersion(ctx context.Context, name, version, digest, href string, latest bool, rfc map[string]RFCEntry) error {
	itemName := "skill " + name + " " + version
	if err := checkHref(href); err != nil {
		return at(err, itemName, "")
	}
	du := c.resolve(href)
	var d struct {
		Kind     string `json:"kind"`
		Artifact struct {
			Name, Version, Type, Description, URL, Digest string
		} `json:"artifact"`
		RoutesToSubagent *struct{ Name, Href string } `json:"routesToSubagent"`
	}
	if err := c.getJSON(ctx, itemName, du, mediaJSON, &d); err != nil {
		return err
	}
	a := d.Artifact
	fail := func(rule Rule, format string, args ...any) error {
		return &Violation{Rule: rule, Item: itemName, URL: du, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case d.Kind != "skill-version":
		return fail(RuleKind, "kind %q, want skill-version", d.Kind)
	case a.Name != name || a.Version != version:
		return fail(RuleName, "artifact %s %s, the identity says %s %s", a.Name, a.Version, name, version)
	case c.Strict && a.Digest != digest:
		return fail(RuleConsistency, "artifact digest %s, the identity says %s", a.Digest, digest)
	}
	if latest && c.Strict && rfc != nil {
		e, ok := rfc[name]
		if !ok || e.Version != a.Version || e.Type != a.Type || e.Description != a.Description || e.URL != a.URL || e.Digest != a.Digest {
			return fail(RuleConsistency, "the latest version's artifact differs from the RFC entry")
		}
	}
	if d.RoutesToSubagent != nil {
		if err := checkHref(d.RoutesToSubagent.Href); err != nil {
			return at(err, itemName, du)
		}
		if _, err := c.get(ctx, itemName+" routesToSubagent", c.resolve(d.RoutesToSubagent.Href), mediaJSON); err != nil {
			return err
		}
	}
	if latest && c.obs != nil {
		// The RFC pass downloaded and checked this artifact already.
		if e, ok := rfc[name]; ok && e.URL == a.URL && e.Digest == a.Digest {
			return nil
		}
	}
	_, err := c.artifact(ctx, itemName, name, a.Type, a.URL, a.Digest)
	return err
}
