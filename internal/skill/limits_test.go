package skill

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// wantProblem fails t unless ps holds a problem of rule and severity whose
// message contains every one of parts.
func wantProblem(t *testing.T, ps []Problem, rule string, severity Severity, parts ...string) {
	t.Helper()
	for _, p := range ps {
		if p.Rule != rule || p.Severity != severity {
			continue
		}
		ok := true
		for _, s := range parts {
			ok = ok && strings.Contains(p.Message, s)
		}
		if ok {
			return
		}
	}
	t.Errorf("want a %s %q problem mentioning %q, got %v", severity, rule, parts, ps)
}

func TestFrontmatterLimits(t *testing.T) {
	const head = "---\nname: demo\ndescription: d\n"
	list := func(n int, item string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+", ", n), ", ") + "]"
	}
	keys := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString("  k" + strings.Repeat("x", i) + ": v\n")
		}
		return b.String()
	}
	tests := []struct {
		name  string
		data  string
		rule  string // "" means no problem at all
		parts []string
	}{
		{"at every limit", head + "license: " + strings.Repeat("l", 1024) + "\nmetadata:\n  tags: " + list(64, strings.Repeat("t", 128)) + "\n  examples: " + list(64, "e") + "\n---\n", "", nil},
		{"block too large", head + "metadata:\n  note: " + strings.Repeat("x", 64<<10) + "\n---\n", RuleLimit, []string{"65536 bytes", "max_frontmatter_bytes"}},
		{"large body is fine", head + "---\n" + strings.Repeat("body\n", 64<<10), "", nil},
		{"unterminated within the limit", head, RuleFrontmatter, []string{"no closing"}},
		{"too many top-level keys", head + strings.ReplaceAll(keys(63), "  ", "") + "---\n", RuleLimit, []string{"front matter holds 65 keys", "max_frontmatter_keys"}},
		{"too many metadata keys", head + "metadata:\n" + keys(65) + "---\n", RuleLimit, []string{"metadata holds 65 keys", "max_frontmatter_keys"}},
		{"too many tags", head + "metadata:\n  tags: " + list(65, "t") + "\n---\n", RuleLimit, []string{"metadata.tags holds 65 items", "max_list_items"}},
		{"too many comma-separated tags", head + "metadata:\n  tags: " + strings.Repeat("t, ", 65) + "\n---\n", RuleLimit, []string{"metadata.tags holds 65 comma-separated items", "max_list_items"}},
		{"too many examples", head + "metadata:\n  examples: " + list(65, "e") + "\n---\n", RuleLimit, []string{"metadata.examples holds 65 items"}},
		{"long list elsewhere", head + "allowed-tools: " + list(65, "Bash") + "\n---\n", RuleLimit, []string{"allowed-tools holds 65 items"}},
		{"long tag", head + "metadata:\n  tags: [" + strings.Repeat("t", 129) + "]\n---\n", RuleLimit, []string{"metadata.tags[0] is 129 characters", "128 (max_tag_chars)"}},
		{"long comma-separated tag", head + "metadata:\n  tags: a, " + strings.Repeat("t", 129) + "\n---\n", RuleLimit, []string{"metadata.tags[1] is 129 characters", "max_tag_chars"}},
		{"long metadata value", head + "metadata:\n  owner: " + strings.Repeat("o", 1025) + "\n---\n", RuleLimit, []string{"metadata.owner is 1025 characters", "1024 (max_value_chars)"}},
		{"long metadata key", head + "metadata:\n  ? " + strings.Repeat("k", 1025) + "\n  : v\n---\n", RuleLimit, []string{"max_value_chars"}},
		{"long example", head + "metadata:\n  examples: [" + strings.Repeat("e", 1025) + "]\n---\n", RuleLimit, []string{"metadata.examples[0] is 1025", "max_value_chars"}},
		{"long license", head + "license: " + strings.Repeat("l", 1025) + "\n---\n", RuleLimit, []string{"license is 1025 characters"}},
		{"nested unknown key", head + "hooks: {pre: {run: [[a, b]]}}\n---\n", RuleUnknownKey, nil},
		{"nested too deep", head + "hooks: " + strings.Repeat("[", 17) + strings.Repeat("]", 17) + "\n---\n", RuleLimit, []string{"nests deeper than 16 levels (max_frontmatter_depth), at line 4"}},
		{"nested at the depth limit", head + "hooks: " + strings.Repeat("[", 16) + strings.Repeat("]", 16) + "\n---\n", RuleUnknownKey, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, ps := ParseSkill("skills/demo/SKILL.md", "demo", []byte(tt.data), testLimits)
			if tt.rule == "" {
				if len(ps) != 0 {
					t.Fatalf("unexpected problems: %v", ps)
				}
				return
			}
			severity := SeverityError
			if tt.rule == RuleUnknownKey {
				severity = SeverityWarning
				if HasError(ps) {
					t.Errorf("unexpected errors: %v", ps)
				}
			}
			wantProblem(t, ps, tt.rule, severity, tt.parts...)
		})
	}
}

// TestDeepNesting: a flow list nested 9,000 deep (18 KB) is refused and
// costs what the YAML parser needs, not the square of the depth (walking
// it with a growing path name took 130 MB).
func TestDeepNesting(t *testing.T) {
	data := []byte("---\nname: demo\ndescription: d\nx: " + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + "\n---\n")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, ps := ParseSkill("skills/demo/SKILL.md", "demo", data, testLimits)
	runtime.ReadMemStats(&after)
	wantProblem(t, ps, RuleLimit, SeverityError, "nests deeper than 16 levels")
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("allocated %d bytes for a %d-byte file", alloc, len(data))
	}
}

// TestFrontmatterDepthConfigured: max_frontmatter_depth set low refuses
// what a higher one allows, naming the key; off (0), nothing is refused
// for its depth.
func TestFrontmatterDepthConfigured(t *testing.T) {
	const head = "---\nname: demo\ndescription: d\n"
	three := head + "metadata:\n  tags: [a]\n---\n" // root, metadata, tags, tag: 3 levels below the root
	four := head + "hooks: [[[[a]]]]\n---\n"
	low := testLimits
	low.MaxDepth = 3
	if _, ps := ParseSkill("skills/demo/SKILL.md", "demo", []byte(three), low); len(ps) != 0 {
		t.Errorf("three levels under max_frontmatter_depth 3: %v", ps)
	}
	_, ps := ParseSkill("skills/demo/SKILL.md", "demo", []byte(four), low)
	wantProblem(t, ps, RuleLimit, SeverityError, "nests deeper than 3 levels (max_frontmatter_depth), at line 4")
	if _, ps := ParseSkill("skills/demo/SKILL.md", "demo", []byte(four), testLimits); HasError(ps) {
		t.Errorf("four levels under max_frontmatter_depth 16: %v", ps)
	}
	deep := head + "hooks: " + strings.Repeat("[", 40) + "a" + strings.Repeat("]", 40) + "\n---\n"
	if _, ps := ParseSkill("skills/demo/SKILL.md", "demo", []byte(deep), Limits{}); HasError(ps) {
		t.Errorf("40 levels with the depth off: %v", ps)
	}
}

// TestLimitsOff: zero limits bound nothing.
func TestLimitsOff(t *testing.T) {
	data := "---\nname: demo\ndescription: d\nmetadata:\n  tags: [" + strings.Repeat("t, ", 999) + strings.Repeat("t", 500) + "]\n  note: " + strings.Repeat("n", 70<<10) + "\n---\n"
	s, ps := ParseSkill("skills/demo/SKILL.md", "demo", []byte(data), Limits{})
	if tags, _ := s.Metadata.Items("tags"); len(ps) != 0 || len(tags) != 1000 {
		t.Errorf("%d tags, problems %v", len(tags), ps)
	}
}

// TestFrontmatterBomb: a SKILL.md just under the default 10 MiB file limit
// whose front matter is 4.9 million tags is refused before its YAML is
// parsed, with a limit problem and almost no memory (it took 1.1 GB).
func TestFrontmatterBomb(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("---\nname: demo\ndescription: A front matter bomb.\nmetadata:\n  tags: [a")
	for range 4_900_000 - 1 {
		b.WriteString(",a")
	}
	b.WriteString("]\n---\nBody\n")
	data := b.Bytes()

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, ps := ParseSkill("skills/demo/SKILL.md", "demo", data, testLimits)
	runtime.ReadMemStats(&after)

	wantProblem(t, ps, RuleLimit, SeverityError, "max_frontmatter_bytes")
	if len(ps) != 1 || s.Metadata != nil {
		t.Errorf("problems %v, metadata of %d keys", ps, len(s.Metadata))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("parsing allocated %d bytes; want under 1 MiB for a refused %d-byte file", alloc, len(data))
	}
}

// TestAliases: anchors and aliases are refused with a rule that says so,
// not read as empty values, and cannot expand ("billion laughs").
func TestAliases(t *testing.T) {
	laughs := "---\nname: demo\ndescription: d\nmetadata:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		laughs += "  " + n + ": &" + n + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n"
		prev = n
	}
	laughs += "---\n"
	for name, data := range map[string]string{
		"alias as description": "---\nname: demo\nx: &a Does things.\ndescription: *a\n---\n",
		"anchor alone":         "---\nname: &n demo\ndescription: d\n---\n",
		"merge key":            "---\nname: demo\ndescription: d\nbase: &b {owner: me}\nmetadata:\n  <<: *b\n---\n",
		"billion laughs":       laughs,
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, ps := ParseSkill("skills/demo/SKILL.md", "demo", []byte(data), testLimits)
			runtime.ReadMemStats(&after)
			wantProblem(t, ps, RuleFrontmatter, SeverityError, "anchors and aliases", "not allowed")
			if len(ps) != 1 {
				t.Errorf("want one problem, got %v", ps)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
				t.Errorf("allocated %d bytes", alloc)
			}
			_, ps = ParseAgent("agents/demo.md", "demo", []byte(data+"Body\n"), testLimits)
			wantProblem(t, ps, RuleFrontmatter, SeverityError, "anchors and aliases")
		})
	}
}

func TestComplexKey(t *testing.T) {
	_, ps := ParseSkill("skills/demo/SKILL.md", "demo", []byte("---\nname: demo\ndescription: d\n? [a, b]\n: c\n---\n"), testLimits)
	wantProblem(t, ps, RuleFrontmatter, SeverityError, "keys must be plain strings")
}

func TestNonStringNameAndDescription(t *testing.T) {
	_, ps := ParseSkill("skills/demo/SKILL.md", "demo", []byte("---\nname: demo\ndescription: [a, b]\n---\n"), testLimits)
	wantProblem(t, ps, RuleField, SeverityError, "description must be a string, not a YAML list")
	_, ps = ParseAgent("agents/demo.md", "demo", []byte("---\nname: {a: b}\ndescription: d\n---\nBody\n"), testLimits)
	wantProblem(t, ps, RuleField, SeverityError, "name must be a string, not a YAML mapping")
}

// splitFrontmatter finds the closing line within max_frontmatter_bytes
// or says why not: too long when the limit cut the file, missing when it
// did not.
func TestSplitFrontmatter(t *testing.T) {
	const tooLong, missing = -2, -1
	tests := []struct {
		data string
		max  int
		want int // the body's offset, tooLong or missing
	}{
		{"---\na: b\n---\nbody", 0, 13},
		{"---\na: b\n---\nbody", 13, 13},
		{"---\na: b\n---\nbody", 12, tooLong},
		{"---\na: b\n---", 12, 12},
		{"---\na: b\n---", 11, tooLong},
		{"---\na: b\n", 0, missing},
		{"---\na: b\n", 9, missing},
		{"---\na: b\n", 8, tooLong},
		{"---\na: b\n---x\n", 12, tooLong},  // "---" at the cut is not a closing line
		{"---\na: b\n  ---  \nbody", 0, 17}, // white space around it is allowed
		{"---\r\na: b\r\n---\r\nbody", 0, 16},
		{"---", 2, tooLong},
		{"---", 0, missing},
	}
	for _, tt := range tests {
		_, got, err := splitFrontmatter([]byte(tt.data), tt.max)
		var re *ruleError
		switch {
		case err == nil:
		case errors.As(err, &re) && re.rule == RuleLimit && strings.Contains(err.Error(), "max_frontmatter_bytes"):
			got = tooLong
		case strings.Contains(err.Error(), "no closing `---` line"):
			got = missing
		default:
			t.Errorf("splitFrontmatter(%q, %d): %v", tt.data, tt.max, err)
			continue
		}
		if got != tt.want {
			t.Errorf("splitFrontmatter(%q, %d) = %d, want %d", tt.data, tt.max, got, tt.want)
		}
	}
}

// A block of several YAML documents is refused: only the first was read,
// and what followed a "--- text" or "..." line went unread, unchecked
// and silently dropped.
func TestSeveralYAMLDocuments(t *testing.T) {
	for name, data := range map[string]string{
		"document start with text": "---\nname: demo\ndescription: d\n--- #more\nlicense: MIT\n---\n",
		"document end, then keys":  "---\nname: demo\ndescription: d\n...\nlicense: [\n---\n",
		"an alias past the end":    "---\nname: demo\ndescription: d\n--- !x\nfoo: *a\n---\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, ps := ParseSkill("skills/demo/SKILL.md", "demo", []byte(data), testLimits)
			wantProblem(t, ps, RuleFrontmatter, SeverityError, "more than one YAML document")
			_, ps = ParseAgent("agents/demo.md", "demo", []byte(data+"Body\n"), testLimits)
			wantProblem(t, ps, RuleFrontmatter, SeverityError, "more than one YAML document")
		})
	}
	for name, data := range map[string]string{
		"a lone document end": "---\nname: demo\ndescription: d\n...\n---\n",
		"empty block":         "---\n---\n",
	} {
		_, ps := ParseSkill("skills/demo/SKILL.md", "demo", []byte(data), testLimits)
		for _, p := range ps {
			if strings.Contains(p.String(), "YAML document") {
				t.Errorf("%s: %v", name, p)
			}
		}
	}
}
