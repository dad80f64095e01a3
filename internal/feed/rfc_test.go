package feed

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/item"
)

// rfcOf decodes the RFC index (or a scoped one) of f for base.
func rfcOf(t *testing.T, f *Feed, base string, key DocKey) rfcIndex {
	t.Helper()
	d, ok := f.Document(Base{URL: base}, key)
	if !ok {
		t.Fatalf("no document %+v", key)
	}
	var idx rfcIndex
	if err := json.Unmarshal(d.Body, &idx); err != nil {
		t.Fatal(err)
	}
	return idx
}

// TestRFCIndexFromItems: the RFC index lists each skill's latest version,
// by name, at its content-addressed absolute URL under the base: the
// archive of an archive version, with its resources, each with its own
// URL and, when not 0644, its mode; the SKILL.md of a lone SKILL.md,
// without resources.
func TestRFCIndexFromItems(t *testing.T) {
	lone := skillVersion("lone", "1.0.0")
	archive := skillVersion("packed", "2.0.0",
		resource{"scripts/run me.sh", "#!/bin/sh\n", 0o755}, resource{"refs/guide.md", "guide\n", 0o644})
	older := skillVersion("packed", "1.0.0", resource{"refs/guide.md", "old guide\n", 0o644})
	f := feedOf([]*item.Skill{item.New("packed", []*item.SkillVersion{older, archive}), item.New("lone", []*item.SkillVersion{lone})}, nil, false)
	const base = "https://h.test/under"
	raw, _ := f.Document(Base{URL: base}, DocKey{Kind: DocRFCIndex})
	idx := rfcOf(t, f, base, DocKey{Kind: DocRFCIndex})
	want := rfcIndex{Schema: RFCSchema, Skills: []rfcEntry{
		{Name: "lone", Type: item.TypeSkillMD, Description: "Skill lone 1.0.0", Version: "1.0.0",
			URL: base + "/api/v1/blobs/sha256/" + lone.SkillMD.Hex() + "/SKILL.md", Digest: lone.SkillMD.String()},
		{Name: "packed", Type: item.TypeArchive, Description: "Skill packed 2.0.0", Version: "2.0.0",
			URL: base + "/api/v1/blobs/sha256/" + archive.Archive.Hex() + "/archive.zip", Digest: archive.Archive.String(),
			Resources: []rfcResource{
				{Path: "refs/guide.md", Digest: content.Sum([]byte("guide\n")).String(),
					URL: base + "/api/v1/blobs/sha256/" + content.Sum([]byte("guide\n")).Hex() + "/refs/guide.md"},
				{Path: "scripts/run me.sh", Digest: content.Sum([]byte("#!/bin/sh\n")).String(), UnixMode: 0o755,
					URL: base + "/api/v1/blobs/sha256/" + content.Sum([]byte("#!/bin/sh\n")).Hex() + "/scripts/run%20me.sh"},
			}},
	}}
	got, _ := json.Marshal(idx)
	wantJSON, _ := json.Marshal(want)
	if string(got) != string(wantJSON) {
		t.Errorf("index\n%s\nwant\n%s", got, wantJSON)
	}
	// The wire: no resources key for a lone SKILL.md, no unixMode for 0644.
	var wire struct {
		Skills []map[string]any `json:"skills"`
	}
	if err := json.Unmarshal(raw.Body, &wire); err != nil {
		t.Fatal(err)
	}
	if _, ok := wire.Skills[0]["resources"]; ok {
		t.Errorf("a lone SKILL.md lists resources: %s", raw.Body)
	}
	rs := wire.Skills[1]["resources"].([]any)
	if _, ok := rs[0].(map[string]any)["unixMode"]; ok {
		t.Errorf("a 0644 resource has a unixMode: %s", raw.Body)
	}
	if m := rs[1].(map[string]any)["unixMode"]; m != float64(0o755) {
		t.Errorf("the 0755 resource's unixMode is %v", m)
	}
}

// TestRFCIndexOfTheExampleTree: every entry of the index of a scanned
// tree, and every resource, is at its content-addressed URL under the
// base, names a file of the feed, and its digest is of the bytes the
// store holds; the scoped index of each skill is its entry alone.
func TestRFCIndexOfTheExampleTree(t *testing.T) {
	f, store := scanFeed(t, Tree{SkillsDir: "../../testdata/skills"})
	const base = "http://127.0.0.1:8080"
	idx := rfcOf(t, f, base, DocKey{Kind: DocRFCIndex})
	if idx.Schema != RFCSchema || len(idx.Skills) != len(f.Skills) || len(f.Skills) != 5 {
		t.Fatalf("index of %d skills, schema %q; the feed has %d", len(idx.Skills), idx.Schema, len(f.Skills))
	}
	stored := func(what, digest string) {
		b, ok := store.Get(content.Digest(digest))
		if !ok || content.Sum(b).String() != digest {
			t.Errorf("%s: digest %s is not of bytes the store holds", what, digest)
		}
	}
	var names []string
	for i, e := range idx.Skills {
		sk := f.Skills[i]
		names = append(names, e.Name)
		if e.Name != sk.Name || e.Version != sk.Latest.Version || e.Type != sk.Latest.Type || e.Digest != sk.Latest.Digest().String() {
			t.Errorf("entry %+v is not %s's latest version %s", e, sk.Name, sk.Latest.Version)
		}
		checkArtifactURL(t, f, Base{URL: base}, e.URL, e.Digest)
		stored(e.Name, e.Digest)
		if (e.Type == item.TypeArchive) != (len(e.Resources) > 0) {
			t.Errorf("%s (%s) lists %d resources", e.Name, e.Type, len(e.Resources))
		}
		for _, r := range e.Resources {
			res, ok := sk.Latest.Resource(r.Path)
			if !ok || r.Digest != res.Digest.String() {
				t.Errorf("%s: resource %+v is not the version's", e.Name, r)
				continue
			}
			checkArtifactURL(t, f, Base{URL: base}, r.URL, r.Digest)
			stored(e.Name+"/"+r.Path, r.Digest)
			want := res.Mode
			if want == 0o644 {
				want = 0 // left out
			}
			if r.UnixMode != want {
				t.Errorf("%s/%s: unixMode %o, mode %o", e.Name, r.Path, r.UnixMode, res.Mode)
			}
		}
		scoped := rfcOf(t, f, base, DocKey{Kind: DocScopedIndex, Name: e.Name})
		if len(scoped.Skills) != 1 || scoped.Schema != RFCSchema || !equalJSON(t, scoped.Skills[0], e) {
			t.Errorf("the scoped index of %s is %+v, not its entry", e.Name, scoped)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("entries not by name: %q", names)
	}
	k8s := idx.Skills[slices.Index(names, "k8s-deploy")]
	if k8s.Version != "1.2.0" || len(k8s.Resources) != 2 || k8s.Resources[1].Path != "scripts/deploy.sh" || k8s.Resources[1].UnixMode != 0o755 || k8s.Resources[0].UnixMode != 0 {
		t.Errorf("k8s-deploy = %+v: want 1.2.0 (not the release candidate), its logo 0644 and its script 0755", k8s)
	}
	if _, ok := f.Document(Base{URL: base}, DocKey{Kind: DocScopedIndex, Name: "no-such-skill"}); ok {
		t.Error("a scoped index of a skill that does not exist")
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return string(x) == string(y)
}
