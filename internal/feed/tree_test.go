package feed

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/item"
)

func TestPagination(t *testing.T) {
	root := t.TempDir()
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		writeFile(t, filepath.Join(root, n, "SKILL.md"), skillMD(n), 0o644)
	}
	tests := []struct {
		size  int
		pages string
	}{
		{0, "all"}, {5, "all"}, {100, "all"}, {2, "1,2,3"}, {4, "1,2"}, {1, "1,2,3,4,5"},
	}
	for _, tt := range tests {
		snap := scanTree(t, Tree{SkillsDir: root, PageSize: tt.size})
		idx := snap.tree(false).indexDoc(snap.pageSize)
		var names []string
		total := 0
		for _, p := range idx.Pages {
			name := strings.TrimSuffix(strings.TrimPrefix(p.Href, "/skills/v1/pages/"), ".json")
			names = append(names, name)
			page, ok := snap.tree(false).pageDoc(snap.pageSize, name)
			if !ok || page.Range != p.Range {
				t.Fatalf("size %d: page %s missing or range %q != %q", tt.size, name, page.Range, p.Range)
			}
			if tt.size > 0 && len(page.Items) > tt.size {
				t.Errorf("size %d: page %s holds %d items", tt.size, name, len(page.Items))
			}
			total += len(page.Items)
		}
		if got := strings.Join(names, ","); got != tt.pages || total != 5 {
			t.Errorf("size %d: pages %s holding %d items, want %s holding 5", tt.size, got, total, tt.pages)
		}
	}
}

// TestNativeTreeResolves: from /manifest.json, every href of the native
// tree (index, pages, identities, versions, a skill's route to its
// sub-agent) is a document of the same feed, reached at its own
// links.self; every item and version is reached; the only other hrefs
// are the two searches.
func TestNativeTreeResolves(t *testing.T) {
	f := scanTree(t, Tree{SkillsDir: "../../testdata/skills", AgentsDir: "../../testdata/agents", PageSize: 2})
	base := Base{URL: "https://skills.example.com"}
	w := walk(t, f, base, "/manifest.json")
	if want := []string{PathSkillSearch, PathSubagentSearch}; !slices.Equal(w.routes, want) {
		t.Errorf("hrefs naming no document: %q, want %q", w.routes, want)
	}
	byKind := map[DocKind][]string{}
	for href, k := range w.keys {
		byKind[k.Kind] = append(byKind[k.Kind], href)
	}
	for kind, want := range map[DocKind]int{
		DocManifest: 1, DocSkillIndex: 1, DocSubagentIndex: 1,
		DocSkillPage: 3, DocSubagentPage: 1, // 5 skills in pages of 2; 2 sub-agents
		DocSkill: 5, DocSkillVersion: 7, DocSubagent: 2, DocSubagentVersion: 3,
	} {
		if n := len(byKind[kind]); n != want {
			t.Errorf("kind %d: %d documents reached (%q), want %d", kind, n, byKind[kind], want)
		}
	}
	if len(w.keys) != 24 {
		t.Errorf("%d documents reached, want 24", len(w.keys))
	}
	for _, sk := range f.Skills {
		for _, v := range sk.Versions {
			href := DocKey{Kind: DocSkillVersion, Name: sk.Name, Version: v.Version}.Path()
			doc, ok := w.docs[href]
			if !ok {
				t.Errorf("%s %s not reached", sk.Name, v.Version)
				continue
			}
			if a := doc["artifact"].(map[string]any); a["digest"] != v.Digest().String() || a["version"] != v.Version {
				t.Errorf("%s: artifact %v", href, a)
			}
		}
	}
	for _, a := range f.Agents {
		for _, v := range a.Versions {
			if doc := w.docs[DocKey{Kind: DocSubagentVersion, Name: a.Name, Version: v.Version}.Path()]; doc == nil || doc["digest"] != v.Digest.String() {
				t.Errorf("%s %s: %v", a.Name, v.Version, doc)
			}
		}
	}
	route := w.docs["/skills/v1/support-triage/versions/1.2.0.json"]["routesToSubagent"]
	if want := map[string]any{"name": "technical-support-diagnostician", "href": "/subagents/v1/technical-support-diagnostician/index.json"}; !equalJSON(t, route, want) {
		t.Errorf("support-triage routes to %v, want %v", route, want)
	}
	pages := w.docs["/skills/v1/index.json"]["pages"].([]any)
	if len(pages) != 3 || pages[0].(map[string]any)["range"] != "code-review..k8s-deploy" || pages[2].(map[string]any)["range"] != "windows-notes..windows-notes" {
		t.Errorf("skill pages %v", pages)
	}
	k8s := w.docs["/skills/v1/k8s-deploy/index.json"]
	if k8s["latestVersion"] != "1.2.0" || len(k8s["versions"].([]any)) != 3 || k8s["versions"].([]any)[0].(map[string]any)["version"] != "2.0.0-rc.1" {
		t.Errorf("k8s-deploy identity %v: want latest 1.2.0, three versions newest first", k8s)
	}
}

// TestPageIndexIsAnItemNamedPages: pages/index.json is the identity
// document of an item named "pages", not a page named "index".
func TestPageIndexIsAnItemNamedPages(t *testing.T) {
	f := feedOf([]*item.Skill{item.New("pages", []*item.SkillVersion{skillVersion("pages", "1.0.0")})}, nil, false)
	key, ok := keyAt(t, "/skills/v1/pages/index.json")
	if want := (DocKey{Kind: DocSkill, Name: "pages"}); !ok || key != want {
		t.Fatalf("pages/index.json is %+v, want %+v", key, want)
	}
	d, ok := f.Document(Base{}, key)
	if doc := decode(t, d); !ok || doc["name"] != "pages" || doc["kind"] != "skill" {
		t.Errorf("pages/index.json = %s", d.Body)
	}
	if _, ok := f.Document(Base{}, DocKey{Kind: DocSkillPage, Page: "index"}); ok {
		t.Error("a page named index")
	}
}

// TestSubagentTreeNeedsAnAgentsRoot: without a sub-agent source no
// document of the sub-agent tree exists and the manifest links to none;
// with an empty one, the tree is there and empty.
func TestSubagentTreeNeedsAnAgentsRoot(t *testing.T) {
	agents := []*item.Agent{item.New("helper", []*item.AgentVersion{agentVersion("helper", "1.0.0")})}
	for _, configured := range []bool{false, true} {
		f := feedOf(nil, agents, configured)
		keys := []DocKey{{Kind: DocSubagentIndex}, {Kind: DocSubagentPage, Page: AllPage}, {Kind: DocSubagent, Name: "helper"},
			{Kind: DocSubagentVersion, Name: "helper", Version: "1.0.0"}}
		for _, k := range keys {
			if _, ok := f.Document(Base{URL: "http://h.test"}, k); ok != configured {
				t.Errorf("configured %v: document %+v exists %v", configured, k, ok)
			}
		}
		m, _ := f.Document(Base{}, DocKey{Kind: DocManifest})
		v1 := decode(t, m)["versions"].(map[string]any)["v1"].(map[string]any)
		_, subagents := v1["subagents"]
		_, search := v1["subagentSearch"]
		if subagents != configured || search != configured {
			t.Errorf("configured %v: the manifest links to sub-agents %v, their search %v", configured, subagents, search)
		}
		n := 0
		for _, k := range f.StaticKeys() {
			if kinds[k.Kind].agentTree {
				n++
			}
		}
		want := 0
		if configured {
			want = 4 // index, page, identity, version
		}
		if n != want {
			t.Errorf("configured %v: %d static keys of the sub-agent tree, want %d", configured, n, want)
		}
	}
	empty := feedOf(nil, nil, true)
	d, ok := empty.Document(Base{}, DocKey{Kind: DocSubagentPage, Page: AllPage})
	if doc := decode(t, d); !ok || len(doc["items"].([]any)) != 0 || doc["range"] != AllPage {
		t.Errorf("the page of an empty sub-agent tree: %s", d.Body)
	}
}
