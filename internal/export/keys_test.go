package export

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/skill"
)

// resourceKeys are the keys an export writes a skill's resource at: its
// content-addressed artifact and its latest-version file.
func resourceKeys(t *testing.T, d content.Digest, name, file string) []string {
	t.Helper()
	var keys []string
	for _, p := range []string{feed.ArtifactPath(d, file), feed.Href(feed.PathLegacyFile, name, file)} {
		k, err := keyOf(p)
		if err != nil {
			t.Fatalf("resource %q of %s: %v", file, name, err)
		}
		keys = append(keys, k)
	}
	return keys
}

// documentKey reports whether key is at a path one of the feed's
// documents may have.
func documentKey(key string) bool {
	segs := strings.Split(key, "/")
	for _, kind := range feed.Kinds() {
		for _, pattern := range kind.Patterns() {
			ps := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
			if len(ps) != len(segs) {
				continue
			}
			match := true
			for i, p := range ps {
				switch {
				case strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}"):
				case strings.Contains(p, "{"): // {version}.json, {page}.json
					prefix, rest, _ := strings.Cut(p, "{")
					_, suffix, _ := strings.Cut(rest, "}")
					match = match && strings.HasPrefix(segs[i], prefix) && strings.HasSuffix(segs[i], suffix)
				default:
					match = match && p == segs[i]
				}
			}
			if match {
				return true
			}
		}
	}
	return key == strings.TrimPrefix(feed.PathAPICatalog, "/") || key == strings.TrimPrefix(feed.PathOpenAPI, "/") || key == StateFile
}

// FuzzKeys: for any resource path that passes validation (the scan's
// rules: skill.ValidResourcePath and skill.ResourcePathLength), every key
// the export writes it at is a clean relative slash path inside the
// output (no "..", not absolute, no backslash, nothing gocloud.dev's
// file:// driver would escape to another name), is the resource's own
// path below its prefix (so two paths never share a key), is no
// document's path nor the state file, and fits every target: each name
// at most skill.MaxSegmentBytes, the key at most skill.MaxKeyBytes.
func FuzzKeys(f *testing.F) {
	for _, s := range []struct{ name, a, b string }{
		{"demo", "notes.md", "notes.md/x"},
		{"demo", "index.json", "versions/1.0.0.json"},
		{"pages", "1.json", "SKILL.md"},
		{"a", "100%25.md", "100%.md"},
		{"a", "a+b.md", "a b.md"},
		{"a", "caf\u00e9.md", "cafe\u0301.md"},
		{"a", "%2e%2e/x", "..%2Fx"},
		{"a", "a%5Cb", "a\\b"},
		{"a", strings.Repeat("n", skill.MaxSegmentBytes), strings.Repeat(strings.Repeat("d", 200)+"/", 4) + strings.Repeat("f", 130)},
		{"x", "?q=1", "#frag"},
		{"x", ".well-known/agent-skills/index.json", "skill/x/.well-known/agent-skills/index.json"},
	} {
		f.Add(s.name, s.a, s.b)
	}
	f.Fuzz(func(t *testing.T, name, a, b string) {
		if !skill.ValidName(name) {
			name = "demo"
		}
		valid := func(p string) bool { return skill.ValidResourcePath(p) && skill.ResourcePathLength(p) == "" }
		if !valid(a) {
			return
		}
		// Two files of one skill, or of two skills, with the same bytes:
		// their artifacts share a digest.
		d := content.Sum([]byte("the same bytes"))
		keysA := resourceKeys(t, d, name, a)
		for i, want := range []string{"api/v1/blobs/sha256/" + d.Hex() + "/" + a, ".well-known/skills/" + name + "/" + a} {
			if keysA[i] != want {
				t.Fatalf("resource %q is exported at %q, not %q", a, keysA[i], want)
			}
		}
		for _, k := range keysA {
			switch {
			case !validKey(k), !filepath.IsLocal(filepath.FromSlash(k)), strings.ContainsAny(k, "\\\x00"):
				t.Fatalf("resource %q: key %q is not a clean path inside the output", a, k)
			case len(k) > skill.MaxKeyBytes:
				t.Fatalf("resource %q: key %q is %d bytes, over %d", a, k, len(k), skill.MaxKeyBytes)
			case documentKey(k):
				t.Fatalf("resource %q: key %q is a document's path", a, k)
			}
			for seg := range strings.SplitSeq(k, "/") {
				if len(seg) > skill.MaxSegmentBytes {
					t.Fatalf("resource %q: key %q has a name of %d bytes, over %d", a, k, len(seg), skill.MaxSegmentBytes)
				}
			}
		}
		if !valid(b) || a == b {
			return
		}
		keysB := resourceKeys(t, d, name, b)
		for i := range keysA {
			if keysA[i] == keysB[i] {
				t.Fatalf("resources %q and %q share the key %q", a, b, keysA[i])
			}
		}
	})
}
