package skill

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// fuzzLimits are small, so that the fuzzer reaches them.
var fuzzLimits = Limits{MaxFrontmatterBytes: 2048, MaxKeys: 8, MaxListItems: 8, MaxValueChars: 64, MaxTagChars: 16, MaxDepth: 16, MaxValueProblems: 10}

// frontmatterSeeds are inputs for both fuzzers: each rule, each limit,
// and the shapes YAML can take.
var frontmatterSeeds = []string{
	"---\nname: demo\ndescription: Does things.\n---\nBody\n",
	"---\r\nname: demo\r\ndescription: d\r\n---\r\nBody\r\n",
	"\ufeff---\nname: demo\ndescription: d\n---\nBody\n",
	"---\nname: demo\ndescription: d\nlicense: MIT\ncompatibility: any\nallowed-tools: [Bash, Read]\nversion: 1.0.0\nmetadata:\n  version: 1.0.0\n  tags: [a, b]\n  examples: x, y\n  owner:\n---\nBody\n",
	"---\nname: demo\ndescription: d\ntools: [read_file, grep]\nmodelRole: Compaction\ntimeoutSeconds: 600\nprefillTimeoutSeconds: 5\nvisibility: internal\nemitStructuredFindings: true\nversion: 1.0.0\nmetadata:\n  tags: [a]\n---\nYou do things.\n",
	"---\nname: demo\ndescription: |\n  two\n  lines\n---\nBody\n",
	"---\nname: demo\nx: &a d\ndescription: *a\n---\nBody\n",
	"---\nname: demo\ndescription: d\nmetadata:\n  <<: {a: b}\n---\n",
	"---\nname: demo\ndescription: \"\\e[31m\\u202e\\u2028\"\n---\nBody \u202e\u200b\ufeff\n",
	"---\nname: demo\ndescription: d\nmetadata:\n  tags: [" + strings.Repeat("t, ", 9) + "]\n---\n",
	"---\nname: demo\ndescription: d\nmetadata:\n  tags: " + strings.Repeat("x", 17) + "\n---\n",
	"---\nname: demo\ndescription: d\nmetadata: {" + strings.Repeat("k: v, ", 9) + "}\n---\n",
	"---\nname: demo\ndescription: d\n" + strings.Repeat("a", 3000) + "\n---\n",
	"---\n? [a]\n: b\n---\n",
	"---\n[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n---\n",
	"---\nname: demo\nname: demo\n---\n",
	"---\njust text\n---\n",
	"---\n---\n",
	"---\nname: [demo\n---\n",
	"---\nname: demo\ndescription: caf\xe9\n---\n",
	"---\nname: demo\ndescription: !!binary aGVsbG8=\ntimeoutSeconds: 0x10\n---\nBody\n",
	"---\n",
	"",
}

// parseTwice parses with parse twice and fails t unless both give the
// same result, and every problem is complete and their number bounded.
func parseTwice[T any](t *testing.T, path string, parse func() (T, []Problem)) (T, []Problem) {
	t.Helper()
	v, ps := parse()
	if v2, ps2 := parse(); !reflect.DeepEqual(v, v2) || !reflect.DeepEqual(ps, ps2) {
		t.Fatalf("two parses differ: %+v %v, then %+v %v", v, ps, v2, ps2)
	}
	if len(ps) > 2*fuzzLimits.MaxKeys+fuzzLimits.MaxValueProblems+8 {
		t.Fatalf("%d problems: %v", len(ps), ps)
	}
	for _, p := range ps {
		if p.Path != path || p.Rule == "" || p.Message == "" || (p.Severity != SeverityError && p.Severity != SeverityWarning) {
			t.Fatalf("incomplete problem %+v", p)
		}
	}
	return v, ps
}

// writeOut renders doc as a front matter file with a body, and the limits
// to parse it with: quoting may make the block longer than the original.
func writeOut(t *testing.T, doc any) ([]byte, Limits) {
	t.Helper()
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	lim := fuzzLimits
	lim.MaxFrontmatterBytes = 0
	return []byte("---\n" + string(out) + "---\nBody\n"), lim
}

// checkPublished fails t unless a value that would be published obeys
// the limits and the character rules.
func checkPublished(t *testing.T, texts []string, meta Meta) {
	t.Helper()
	for _, s := range texts {
		for i, r := range s {
			if fieldRuneProblem(r, true) != "" {
				t.Fatalf("published %q holds U+%04X at byte %d", s, r, i)
			}
		}
	}
	for _, e := range meta {
		if len(e.List) > fuzzLimits.MaxListItems {
			t.Fatalf("metadata.%s holds %d items", e.Key, len(e.List))
		}
	}
	tags, _ := meta.Items("tags")
	for _, tag := range tags {
		if TextLen(tag) > fuzzLimits.MaxTagChars {
			t.Fatalf("tag %q is too long", tag)
		}
	}
}

func emptyToNil[S ~[]E, E any](m S) S {
	if len(m) == 0 {
		return nil
	}
	return m
}

// renderMetadata is metadata as a YAML value, lists as lists.
func renderMetadata(meta Meta) map[string]any {
	if meta == nil {
		return nil
	}
	out := make(map[string]any, len(meta))
	for _, e := range meta {
		if e.List != nil {
			out[e.Key] = e.List
		} else {
			out[e.Key] = e.Value
		}
	}
	return out
}

// metaValues are the values of meta, lists joined.
func metaValues(meta Meta) []string {
	var out []string
	for _, e := range meta {
		out = append(out, e.String())
	}
	return out
}

// FuzzFrontmatter: ParseSkill never panics, reports complete problems of
// bounded number, and is deterministic; what it accepts obeys the limits
// and character rules, and written out again as a canonical SKILL.md it
// validates to the same skill.
func FuzzFrontmatter(f *testing.F) {
	for _, s := range frontmatterSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const path = "skills/demo/SKILL.md"
		s, ps := parseTwice(t, path, func() (SkillMD, []Problem) { return ParseSkill(path, "demo", data, fuzzLimits) })
		if HasError(ps) {
			return
		}
		if s.Name != "demo" || strings.TrimSpace(s.Description) == "" || TextLen(s.Description) > MaxDescriptionLen {
			t.Fatalf("accepted %+v", s)
		}
		checkPublished(t, append([]string{s.Description, s.License, s.Compatibility, s.AllowedTools}, metaValues(s.Metadata)...), s.Metadata)
		var fm map[string]any
		if err := json.Unmarshal(FrontmatterJSON(data), &fm); err != nil || fm["name"] != s.Name {
			t.Fatalf("front matter %s: %v; want a JSON object naming %q", FrontmatterJSON(data), err, s.Name)
		}

		doc := struct {
			Name          string         `yaml:"name"`
			Description   string         `yaml:"description"`
			License       string         `yaml:"license,omitempty"`
			Compatibility string         `yaml:"compatibility,omitempty"`
			AllowedTools  string         `yaml:"allowed-tools,omitempty"`
			Version       string         `yaml:"version,omitempty"`
			Metadata      map[string]any `yaml:"metadata,omitempty"`
		}{s.Name, s.Description, s.License, s.Compatibility, s.AllowedTools, "", renderMetadata(s.Metadata)}
		if _, inMeta := s.Metadata.Get("version"); !inMeta {
			doc.Version = s.Version
		}
		written, lim := writeOut(t, doc)
		s2, ps2 := ParseSkill(path, "demo", written, lim)
		s.Metadata, s2.Metadata = emptyToNil(s.Metadata), emptyToNil(s2.Metadata)
		if HasError(ps2) || !reflect.DeepEqual(s, s2) {
			t.Fatalf("written out as\n%s\nit parses to %+v, %v; want %+v", written, s2, ps2, s)
		}
	})
}

// FuzzAgent: ParseAgent never panics, reports complete problems of
// bounded number, and is deterministic; what it accepts obeys the limits
// and character rules, and written out again it validates to the same
// agent.
func FuzzAgent(f *testing.F) {
	for _, s := range frontmatterSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const path = "agents/demo.md"
		a, ps := parseTwice(t, path, func() (AgentMD, []Problem) { return ParseAgent(path, "demo", data, fuzzLimits) })
		if HasError(ps) {
			return
		}
		if a.Name != "demo" || strings.TrimSpace(a.Description) == "" {
			t.Fatalf("accepted %+v", a)
		}
		checkPublished(t, append(append([]string{a.Description}, a.Tools...), metaValues(a.Metadata)...), a.Metadata)

		doc := struct {
			Name                   string         `yaml:"name"`
			Description            string         `yaml:"description"`
			Tools                  []string       `yaml:"tools,omitempty"`
			ModelRole              string         `yaml:"modelRole,omitempty"`
			TimeoutSeconds         int            `yaml:"timeoutSeconds,omitempty"`
			PrefillTimeoutSeconds  int            `yaml:"prefillTimeoutSeconds,omitempty"`
			Visibility             string         `yaml:"visibility,omitempty"`
			EmitStructuredFindings bool           `yaml:"emitStructuredFindings,omitempty"`
			Version                string         `yaml:"version,omitempty"`
			Metadata               map[string]any `yaml:"metadata,omitempty"`
		}{a.Name, a.Description, a.Tools, a.ModelRole, a.TimeoutSeconds, a.PrefillTimeoutSeconds, a.Visibility,
			a.EmitStructuredFindings, a.Version, renderMetadata(a.Metadata)}
		written, lim := writeOut(t, doc)
		a2, ps2 := ParseAgent(path, "demo", written, lim)
		a.Metadata, a2.Metadata = emptyToNil(a.Metadata), emptyToNil(a2.Metadata)
		if len(a.Tools) == 0 {
			a.Tools = nil
		}
		if HasError(ps2) || !reflect.DeepEqual(a, a2) {
			t.Fatalf("written out as\n%s\nit parses to %+v, %v; want %+v", written, a2, ps2, a)
		}
	})
}

// metaIs reports whether meta holds key with the value want.
func metaIs(meta Meta, key, want string) bool {
	v, ok := meta.Get(key)
	return ok && v == want
}
