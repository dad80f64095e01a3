package feed

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"sync"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/skillserver/skillserver/internal/item"
)

// The ClawHub-compatible read API (docs/http-api.md, "ClawHub read
// API"): the documents the clawhub CLI reads to search, inspect, install
// and update skills, as a view of the snapshot. Each skill is a ClawHub
// skill whose slug is its name; it has no owner. Times are milliseconds
// since the epoch, as ClawHub's are.

// ClawHubDiscovery is the document at PathClawHubDiscovery: where the
// API is, which the CLI needs absolute.
type ClawHubDiscovery struct {
	APIBase string `json:"apiBase"`
}

type clawSearch struct {
	Results []clawSearchHit `json:"results"`
}

type clawSearchHit struct {
	Slug        string  `json:"slug"`
	DisplayName string  `json:"displayName"`
	Summary     string  `json:"summary"`
	Version     string  `json:"version"`
	Score       float64 `json:"score"`
	UpdatedAt   int64   `json:"updatedAt"`
}

type clawSkill struct {
	Slug        string            `json:"slug"`
	DisplayName string            `json:"displayName"`
	Summary     string            `json:"summary"`
	Tags        map[string]string `json:"tags"`
	Stats       struct{}          `json:"stats"`
	CreatedAt   int64             `json:"createdAt"`
	UpdatedAt   int64             `json:"updatedAt"`
	Topics      []string          `json:"topics,omitempty"`
}

type clawVersion struct {
	Version   string     `json:"version"`
	CreatedAt int64      `json:"createdAt"`
	Changelog string     `json:"changelog"`
	License   *string    `json:"license"`
	Files     []clawFile `json:"files,omitempty"`
}

type clawFile struct {
	Path        string `json:"path"`
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"`
	ContentType string `json:"contentType"`
}

type clawSkillDoc struct {
	Skill         clawSkill   `json:"skill"`
	LatestVersion clawVersion `json:"latestVersion"`
	Owner         *struct{}   `json:"owner"` // always null: a tree's skills have no owner
}

type clawSkillListItem struct {
	clawSkill
	LatestVersion clawVersion `json:"latestVersion"`
}

type clawList struct {
	Items      []clawSkillListItem `json:"items"`
	NextCursor *string             `json:"nextCursor"`
}

type clawVersionDoc struct {
	Version clawVersion `json:"version"`
	Skill   struct {
		Slug        string `json:"slug"`
		DisplayName string `json:"displayName"`
	} `json:"skill"`
}

type clawVersions struct {
	Items      []clawVersion `json:"items"`
	NextCursor *string       `json:"nextCursor"`
}

type clawVersionRef struct {
	Version string `json:"version"`
}

type clawResolve struct {
	Match         *clawVersionRef `json:"match"`
	LatestVersion *clawVersionRef `json:"latestVersion"`
}

// ClawHubSearch ranks skills for q as the read API does, at most limit
// (0: all); a hit's score falls with its rank.
func (f *Feed) ClawHubSearch(q string, limit int) any {
	hits := f.SearchSkills(q)
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	out := clawSearch{Results: make([]clawSearchHit, 0, len(hits))}
	for i, h := range hits {
		sk, _ := f.Skill(h.Name)
		out.Results = append(out.Results, clawSearchHit{Slug: h.Name, DisplayName: titleCase(h.Name), Summary: h.Description,
			Version: h.LatestVersion, Score: 1 / float64(i+1), UpdatedAt: f.clawTime(sk.Latest)})
	}
	return out
}

// ClawHubList lists the skills whose name starts with prefix, by name,
// at most limit (0: all).
func (f *Feed) ClawHubList(prefix string, limit int) any {
	out := clawList{Items: []clawSkillListItem{}}
	for _, sk := range f.Skills {
		if !strings.HasPrefix(sk.Name, prefix) {
			continue
		}
		if limit > 0 && len(out.Items) == limit {
			break
		}
		out.Items = append(out.Items, clawSkillListItem{clawSkill: f.clawSkill(sk), LatestVersion: f.clawVersion(sk.Latest, false)})
	}
	return out
}

// ClawHubSkill is the detail of the skill slug.
func (f *Feed) ClawHubSkill(slug string) (any, bool) {
	sk, ok := f.Skill(slug)
	if !ok {
		return nil, false
	}
	return clawSkillDoc{Skill: f.clawSkill(sk), LatestVersion: f.clawVersion(sk.Latest, false)}, true
}

// ClawHubVersion is the detail of one version of slug, with its files.
func (f *Feed) ClawHubVersion(slug, version string) (any, bool) {
	sk, v, ok := f.ClawHubVersionOf(slug, version)
	if !ok {
		return nil, false
	}
	d := clawVersionDoc{Version: f.clawVersion(v, true)}
	d.Skill.Slug, d.Skill.DisplayName = sk.Name, titleCase(sk.Name)
	return d, true
}

// ClawHubVersions lists the versions of slug, newest first, at most
// limit (0: all).
func (f *Feed) ClawHubVersions(slug string, limit int) (any, bool) {
	sk, ok := f.Skill(slug)
	if !ok {
		return nil, false
	}
	vs := sk.Versions
	if limit > 0 && len(vs) > limit {
		vs = vs[:limit]
	}
	out := clawVersions{Items: make([]clawVersion, len(vs))}
	for i, v := range vs {
		out.Items[i] = f.clawVersion(v, false)
	}
	return out, true
}

// ClawHubResolve names the version of slug whose files have the
// fingerprint hash (ClawHubFingerprint), and the latest.
func (f *Feed) ClawHubResolve(slug, hash string) (any, bool) {
	sk, ok := f.Skill(slug)
	if !ok {
		return nil, false
	}
	out := clawResolve{LatestVersion: &clawVersionRef{Version: sk.Latest.Version}}
	for _, v := range sk.Versions {
		if ClawHubFingerprint(v.Files()) == hash {
			out.Match = &clawVersionRef{Version: v.Version}
			break
		}
	}
	return out, true
}

// ClawHubVersionOf is the version of slug the CLI names: "" and "latest"
// are the latest.
func (f *Feed) ClawHubVersionOf(slug, version string) (*item.Skill, *item.SkillVersion, bool) {
	sk, ok := f.Skill(slug)
	if !ok {
		return nil, nil, false
	}
	if version == "" || version == item.LatestAlias {
		return sk, sk.Latest, true
	}
	v, ok := sk.Version(version)
	return sk, v, ok
}

// clawCollator orders paths as the CLI does (JavaScript's localeCompare,
// which is ICU's collation, not byte order).
var clawCollator = sync.OnceValue(func() *collate.Collator { return collate.New(language.English) })

// ClawHubFingerprint is the fingerprint the clawhub CLI computes over an
// installed skill's files to find its version: the lower-case hex SHA-256
// of the lines "path:sha256hex", sorted by collation, joined with "\n".
// Paths with a segment starting with "." or named node_modules do not
// count, as the CLI leaves them out.
func ClawHubFingerprint(files []item.Resource) string {
	lines := make([]string, 0, len(files))
	var paths []string
	byPath := map[string]string{}
	for _, fl := range files {
		if ignoredByClawHub(fl.Path) {
			continue
		}
		paths = append(paths, fl.Path)
		byPath[fl.Path] = fl.Digest.Hex()
	}
	c := clawCollator()
	slices.SortFunc(paths, func(a, b string) int { return c.CompareString(a, b) })
	for _, p := range paths {
		lines = append(lines, p+":"+byPath[p])
	}
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}

func ignoredByClawHub(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if strings.HasPrefix(seg, ".") || seg == "node_modules" {
			return true
		}
	}
	return false
}

func (f *Feed) clawSkill(sk *item.Skill) clawSkill {
	oldest := sk.Versions[len(sk.Versions)-1]
	return clawSkill{Slug: sk.Name, DisplayName: titleCase(sk.Name), Summary: sk.Latest.Description,
		Tags: map[string]string{item.LatestAlias: sk.Latest.Version}, CreatedAt: f.clawTime(oldest),
		UpdatedAt: f.clawTime(sk.Latest), Topics: sk.Latest.List("tags")}
}

func (f *Feed) clawVersion(v *item.SkillVersion, files bool) clawVersion {
	cv := clawVersion{Version: v.Version, CreatedAt: f.clawTime(v)}
	if files {
		for _, r := range v.Files() {
			cv.Files = append(cv.Files, clawFile{Path: r.Path, Size: r.Size, SHA256: r.Digest.Hex(), ContentType: ContentType(r.Path)})
		}
	}
	return cv
}

func (f *Feed) clawTime(v *item.SkillVersion) int64 {
	return f.SkillPublished(&v.VersionInfo).UnixMilli()
}
