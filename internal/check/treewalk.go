package check

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

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

type versionIdentity struct {
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
func checkOrder(id versionIdentity) error {
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
func (c *Client) walkTree(ctx context.Context, indexURL, kind string, visit func(name string, id versionIdentity) error) error {
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

func (c *Client) walkItem(ctx context.Context, pageURL, kind string, it pageItem, visit func(name string, id versionIdentity) error) error {
	itemName := kind + " " + it.Name
	if err := checkHref(it.Href); err != nil {
		return at(err, itemName, pageURL)
	}
	iu := c.resolve(it.Href)
	var id versionIdentity
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
	indexURL := c.entry(pathSubagentIndex)
	err := c.walkTree(ctx, indexURL, "subagent", func(name string, id versionIdentity) error {
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
				c.Agents[name] = synced(d.Version, d.Digest, map[string][]byte{agentFile: body}, c.obs == nil)
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
	mu := c.entry(pathManifest)
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
	if c.obs != nil && m.Schema != ManifestSchema {
		c.obs.warn(&Violation{Rule: RuleManifestSchema, Item: itemName, URL: mu, Msg: fmt.Sprintf("$schema is %q, want %q", m.Schema, ManifestSchema)})
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
	err := c.walkTree(ctx, c.resolve(v1["skills"].Href), "skill", func(name string, id versionIdentity) error {
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
			errs = append(errs, &Violation{Rule: RuleConsistency, Item: "skill " + name, URL: c.entry(pathRFCIndex), Msg: "the native tree lists it, the RFC index does not"})
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
