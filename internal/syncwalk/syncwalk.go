// Package syncwalk is a model client: it syncs from a skillserver the way
// netclaw's daemon and the Netclaw.SkillClient library do,
// request by request, and fails on anything they would reject. Tests run
// it against the real server; it is not used by the server itself.
//
// It must not import the server's packages except internal/skill, whose
// agent-md rules are netclaw's rules by design.
package syncwalk

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/skillserver/skillserver/internal/skill"
)

// RFCSchema is the only $schema RFC clients accept.
const RFCSchema = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"

var (
	nameRE   = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// Synced is what a client recorded for one item after a pass.
type Synced struct {
	Version string
	Digest  string
	Files   map[string][]byte // skill: path -> bytes; agent: "agent.md"
}

// Client syncs from one feed and keeps state between passes, as netclaw
// does, so a second pass over an unchanged server downloads nothing.
type Client struct {
	HTTP *http.Client
	Base string // feed base, e.g. http://127.0.0.1:8080
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
}

// New returns a client for the feed at base.
func New(base string) *Client {
	// netclaw drops its key on a redirect, so a redirect is a failure.
	noRedirect := &http.Client{CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		return fmt.Errorf("redirected to %s: authenticated routes must not redirect", req.URL)
	}}
	return &Client{HTTP: noRedirect, Base: strings.TrimRight(base, "/"), Skills: map[string]Synced{}, Agents: map[string]Synced{}, Strict: true}
}

// get fetches u (absolute, or root-relative to Base) and requires 200.
// Like netclaw, it never asks for a content encoding.
func (c *Client) get(ctx context.Context, u string) ([]byte, error) {
	if strings.HasPrefix(u, "/") {
		u = c.Base + u
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept-Encoding", "identity")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	c.Requests++
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return body, &StatusError{URL: u, Code: resp.StatusCode}
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && ce != "identity" {
		return nil, fmt.Errorf("GET %s: Content-Encoding %q although none was accepted", u, ce)
	}
	return body, nil
}

// StatusError is a non-200 answer.
type StatusError struct {
	URL  string
	Code int
}

func (e *StatusError) Error() string { return fmt.Sprintf("GET %s: status %d", e.URL, e.Code) }

func (c *Client) getJSON(ctx context.Context, u string, v any) error {
	b, err := c.get(ctx, u)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// download fetches an artifact and verifies its digest over the raw body.
func (c *Client) download(ctx context.Context, u, digest string) ([]byte, error) {
	if !digestRE.MatchString(digest) {
		return nil, fmt.Errorf("digest %q is not sha256:<64 lowercase hex>", digest)
	}
	pu, err := url.Parse(u)
	if err != nil || !pu.IsAbs() {
		return nil, fmt.Errorf("artifact url %q is not absolute", u)
	}
	b, err := c.get(ctx, u)
	if err != nil {
		return nil, err
	}
	c.Downloads++
	sum := sha256.Sum256(b)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != digest {
		return nil, fmt.Errorf("GET %s: digest %s, advertised %s", u, got, digest)
	}
	return b, nil
}

// RFCEntry is one skill of the RFC index.
type RFCEntry struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	URL         string `json:"url"`
	Digest      string `json:"digest"`
	Version     string `json:"version"`
	Resources   []struct {
		Path     string `json:"path"`
		Digest   string `json:"digest"`
		URL      string `json:"url"`
		UnixMode int    `json:"unixMode"`
	} `json:"resources"`
}

// SyncSkills is netclaw's RFC pass: read the index, skip skills whose
// (version, digest) are unchanged, download and verify the rest.
func (c *Client) SyncSkills(ctx context.Context) ([]RFCEntry, error) {
	var idx struct {
		Schema string     `json:"$schema"`
		Skills []RFCEntry `json:"skills"`
	}
	if err := c.getJSON(ctx, "/.well-known/agent-skills/index.json", &idx); err != nil {
		return nil, err
	}
	if idx.Schema != RFCSchema {
		return nil, fmt.Errorf("index $schema %q: the skills CLI drops the whole index", idx.Schema)
	}
	if idx.Skills == nil {
		return nil, errors.New("index skills is null, not a list")
	}
	var errs []error
	seen := map[string]bool{}
	for _, e := range idx.Skills {
		if err := c.syncSkill(ctx, e, seen); err != nil {
			errs = append(errs, fmt.Errorf("skill %s: %w", e.Name, err))
		}
	}
	return idx.Skills, errors.Join(errs...)
}

func (c *Client) syncSkill(ctx context.Context, e RFCEntry, seen map[string]bool) error {
	switch {
	case !nameRE.MatchString(e.Name) || len(e.Name) > 64:
		return fmt.Errorf("invalid name")
	case seen[e.Name]:
		return fmt.Errorf("listed twice")
	case utf8.RuneCountInString(e.Description) > 1024 || strings.TrimSpace(e.Description) == "":
		return fmt.Errorf("description empty or over 1024 characters")
	case e.Version == "":
		return fmt.Errorf("no version")
	}
	seen[e.Name] = true
	if prev, ok := c.Skills[e.Name]; ok && prev.Version == e.Version && prev.Digest == e.Digest {
		return nil
	}
	body, err := c.download(ctx, e.URL, e.Digest)
	if err != nil {
		return err
	}
	var files map[string][]byte
	switch e.Type {
	case "archive":
		files, err = CheckZip(body)
	case "skill-md":
		if !utf8.Valid(body) {
			err = errors.New("SKILL.md is not valid UTF-8")
		}
		files = map[string][]byte{"SKILL.md": body}
	default:
		err = fmt.Errorf("unknown type %q", e.Type)
	}
	if err != nil {
		return err
	}
	c.Skills[e.Name] = Synced{Version: e.Version, Digest: e.Digest, Files: files}
	return nil
}

// textExt are the files netclaw requires to be strict UTF-8 in an archive.
var textExt = map[string]bool{".md": true, ".txt": true, ".json": true, ".yaml": true, ".yml": true, ".sh": true, ".py": true}

// CheckZip applies netclaw's archive rules and returns the files.
func CheckZip(b []byte) (map[string][]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("archive is not a zip: %w", err)
	}
	files := map[string][]byte{}
	folded := map[string]bool{}
	for _, f := range zr.File {
		name := f.Name
		if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") {
			return nil, fmt.Errorf("entry %q: absolute or malformed path", name)
		}
		for _, seg := range strings.Split(name, "/") {
			if seg == "" || seg == "." || seg == ".." {
				return nil, fmt.Errorf("entry %q: empty, . or .. segment", name)
			}
		}
		mode := f.Mode()
		if mode&^(0o777) != 0 {
			return nil, fmt.Errorf("entry %q: mode %v is not a plain file within 0777", name, mode)
		}
		if low := strings.ToLower(name); folded[low] {
			return nil, fmt.Errorf("entry %q: two paths equal ignoring case", name)
		} else {
			folded[low] = true
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", name, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", name, err)
		}
		if (name == "SKILL.md" || textExt[strings.ToLower(path.Ext(name))]) && !utf8.Valid(data) {
			return nil, fmt.Errorf("entry %q: not valid UTF-8", name)
		}
		files[name] = data
	}
	if _, ok := files["SKILL.md"]; !ok {
		return nil, errors.New("no SKILL.md at the archive root")
	}
	return files, nil
}

type treeIndex struct {
	Kind  string `json:"kind"`
	Pages []struct {
		Range string `json:"range"`
		Href  string `json:"href"`
	} `json:"pages"`
}

type treePage struct {
	Kind  string `json:"kind"`
	Items []struct {
		Name          string `json:"name"`
		LatestVersion string `json:"latestVersion"`
		VersionRange  struct {
			Min   string `json:"min"`
			Max   string `json:"max"`
			Count int    `json:"count"`
		} `json:"versionRange"`
		Href string `json:"href"`
	} `json:"items"`
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
		return fmt.Errorf("href %q is not root-relative (netclaw would prefix it with api/v1/)", h)
	}
	return nil
}

// walkTree follows index -> pages -> items -> identity for one collection
// and calls visit with each item's identity document.
func (c *Client) walkTree(ctx context.Context, indexHref, kind string, visit func(item string, id identity) error) error {
	var idx treeIndex
	if err := c.getJSON(ctx, indexHref, &idx); err != nil {
		return err
	}
	if idx.Kind != kind+"-index" {
		return fmt.Errorf("%s: kind %q", indexHref, idx.Kind)
	}
	var errs []error
	for _, p := range idx.Pages {
		if err := checkHref(p.Href); err != nil {
			return err
		}
		var page treePage
		if err := c.getJSON(ctx, p.Href, &page); err != nil {
			return err
		}
		if page.Kind != kind+"-page" {
			return fmt.Errorf("%s: kind %q", p.Href, page.Kind)
		}
		for _, it := range page.Items {
			if err := checkHref(it.Href); err != nil {
				errs = append(errs, err)
				continue
			}
			var id identity
			if err := c.getJSON(ctx, it.Href, &id); err != nil {
				errs = append(errs, err)
				continue
			}
			if id.Kind != kind || id.Name != it.Name {
				errs = append(errs, fmt.Errorf("%s: kind %q name %q, want %s %s", it.Href, id.Kind, id.Name, kind, it.Name))
				continue
			}
			if c.Strict {
				switch {
				case id.LatestVersion != it.LatestVersion:
					errs = append(errs, fmt.Errorf("%s: latestVersion %q, page says %q", it.Href, id.LatestVersion, it.LatestVersion))
					continue
				case len(id.Versions) != it.VersionRange.Count || len(id.Versions) == 0 ||
					id.Versions[0].Version != it.VersionRange.Max || id.Versions[len(id.Versions)-1].Version != it.VersionRange.Min:
					errs = append(errs, fmt.Errorf("%s: versions disagree with the page's versionRange", it.Href))
					continue
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
				c.Skipped++
				continue
			}
			if n != 1 {
				errs = append(errs, fmt.Errorf("%s: %d versions equal the page's latestVersion %q, want exactly 1", it.Href, n, it.LatestVersion))
				continue
			}
			id.LatestVersion = it.LatestVersion
			if err := visit(it.Name, id); err != nil {
				errs = append(errs, fmt.Errorf("%s %s: %w", kind, it.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// SyncAgents is netclaw's sub-agent pass, straight to the tree at the host
// root. After a clean pass it prunes every agent the server no longer
// lists, as netclaw does.
func (c *Client) SyncAgents(ctx context.Context) error {
	listed := map[string]bool{}
	err := c.walkTree(ctx, "/subagents/v1/index.json", "subagent", func(name string, id identity) error {
		listed[name] = true
		for _, v := range id.Versions {
			if v.Version != id.LatestVersion {
				continue
			}
			if err := checkHref(v.Href); err != nil {
				return err
			}
			var d struct {
				Kind, Name, Version, Type, Description, URL, Digest string
			}
			if err := c.getJSON(ctx, v.Href, &d); err != nil {
				return err
			}
			// netclaw checks the detail's kind, type and name, then the
			// download against the detail's digest; the identity's digest
			// may be older when a reload fell between the two requests.
			switch {
			case d.Kind != "subagent-version" || d.Type != "agent-md" || d.Name != name || d.Version != v.Version:
				return fmt.Errorf("%s: kind %q type %q name %q version %q", v.Href, d.Kind, d.Type, d.Name, d.Version)
			case c.Strict && d.Digest != v.Digest:
				return fmt.Errorf("%s: digest %s, identity says %s", v.Href, d.Digest, v.Digest)
			}
			if prev, ok := c.Agents[name]; ok && prev.Version == d.Version && prev.Digest == d.Digest {
				return nil
			}
			body, err := c.download(ctx, d.URL, d.Digest)
			if err != nil {
				return err
			}
			a, ps := skill.ParseAgent(d.URL, name, body, skill.Limits{}) // netclaw sets none
			if skill.HasError(ps) || a.Name != name {
				return fmt.Errorf("agent file rejected: %v", ps)
			}
			c.Agents[name] = Synced{Version: d.Version, Digest: d.Digest, Files: map[string][]byte{"agent.md": body}}
		}
		return nil
	})
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound && strings.HasSuffix(se.URL, "/subagents/v1/index.json") {
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
	var m struct {
		APIVersion string `json:"apiVersion"`
		Versions   map[string]map[string]struct {
			Href string `json:"href"`
		} `json:"versions"`
	}
	if err := c.getJSON(ctx, "/manifest.json", &m); err != nil {
		return err
	}
	v1, ok := m.Versions["v1"]
	if !ok {
		return errors.New("manifest has no versions.v1")
	}
	for _, key := range []string{"self", "skills"} {
		if err := checkHref(v1[key].Href); err != nil {
			return fmt.Errorf("manifest %s: %w", key, err)
		}
	}
	byName := map[string]RFCEntry{}
	for _, e := range rfc {
		byName[e.Name] = e
	}
	found := map[string]bool{}
	err := c.walkTree(ctx, v1["skills"].Href, "skill", func(name string, id identity) error {
		found[name] = true
		for _, v := range id.Versions {
			var d struct {
				Kind     string `json:"kind"`
				Artifact struct {
					Name, Version, Type, Description, URL, Digest string
				} `json:"artifact"`
				RoutesToSubagent *struct{ Name, Href string } `json:"routesToSubagent"`
			}
			if err := c.getJSON(ctx, v.Href, &d); err != nil {
				return err
			}
			a := d.Artifact
			if d.Kind != "skill-version" || a.Name != name || a.Version != v.Version || (c.Strict && a.Digest != v.Digest) {
				return fmt.Errorf("%s: kind %q artifact %s@%s %s disagrees with identity", v.Href, d.Kind, a.Name, a.Version, a.Digest)
			}
			if v.Version == id.LatestVersion && c.Strict {
				e, ok := byName[name]
				if !ok || e.Version != a.Version || e.Type != a.Type || e.Description != a.Description || e.URL != a.URL || e.Digest != a.Digest {
					return fmt.Errorf("%s: latest artifact differs from the RFC entry", v.Href)
				}
			}
			if d.RoutesToSubagent != nil {
				if _, err := c.get(ctx, d.RoutesToSubagent.Href); err != nil {
					return fmt.Errorf("routesToSubagent: %w", err)
				}
			}
			body, err := c.download(ctx, a.URL, a.Digest)
			if err != nil {
				return err
			}
			if a.Type == "archive" {
				if _, err := CheckZip(body); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil || !c.Strict {
		return err
	}
	for name := range byName {
		if !found[name] {
			return fmt.Errorf("RFC index lists %s, the native tree does not", name)
		}
	}
	if len(found) != len(byName) {
		return fmt.Errorf("native tree lists %d skills, the RFC index %d", len(found), len(byName))
	}
	return nil
}
