package skill

import (
	"strings"
	"testing"
)

func TestParseSkill(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name     string
		data     string
		wantRule string // "" means valid with no problem at all
		severity Severity
		check    func(t *testing.T, s SkillMD)
	}{
		{name: "minimal", data: "---\nname: demo\ndescription: Does things.\n---\nBody\n"},
		{name: "crlf", data: "---\r\nname: demo\r\ndescription: Does things.\r\n---\r\n\r\nBody\r\n"},
		{name: "bom", data: "\ufeff---\nname: demo\ndescription: Does things.\n---\n"},
		{name: "empty body", data: "---\nname: demo\ndescription: d\n---\n"},
		{name: "all optional fields", data: "---\nname: demo\ndescription: d\nlicense: MIT\ncompatibility: any\nallowed-tools: Bash Read\nmetadata:\n  owner: me\n---\n",
			check: func(t *testing.T, s SkillMD) {
				if s.License != "MIT" || s.Compatibility != "any" || s.AllowedTools != "Bash Read" || !metaIs(s.Metadata, "owner", "me") {
					t.Errorf("fields = %+v", s)
				}
			}},
		{name: "metadata list joined", data: "---\nname: demo\ndescription: d\nmetadata:\n  tags: [a, b]\n---\n",
			check: func(t *testing.T, s SkillMD) {
				if tags, _ := s.Metadata.Items("tags"); !metaIs(s.Metadata, "tags", "a, b") || len(tags) != 2 {
					t.Errorf("metadata %+v: want tags \"a, b\", a list of 2", s.Metadata)
				}
			}},
		{name: "metadata version keeps its text", data: "---\nname: demo\ndescription: d\nmetadata:\n  version: 1.10\n---\n",
			check: func(t *testing.T, s SkillMD) {
				if s.Version != "1.10" {
					t.Errorf("version = %q, want 1.10 as written", s.Version)
				}
			}},
		{name: "top-level version", data: "---\nname: demo\ndescription: d\nversion: 2.0.0\n---\n",
			check: func(t *testing.T, s SkillMD) {
				if s.Version != "2.0.0" {
					t.Errorf("version = %q", s.Version)
				}
			}},
		{name: "equal versions both places", data: "---\nname: demo\ndescription: d\nversion: 2.0.0\nmetadata:\n  version: 2.0.0\n---\n"},
		{name: "description at limit", data: "---\nname: demo\ndescription: " + long(1024) + "\n---\n"},
		{name: "name at limit", data: "---\nname: " + long(64) + "\ndescription: d\n---\n", wantRule: RuleNameMismatch, severity: SeverityError},

		{name: "not utf-8", data: "---\nname: demo\ndescription: caf\xe9\n---\n", wantRule: RuleEncoding, severity: SeverityError},
		{name: "no front matter", data: "# demo\n", wantRule: RuleFrontmatter, severity: SeverityError},
		{name: "leading blank line", data: "\n---\nname: demo\ndescription: d\n---\n", wantRule: RuleFrontmatter, severity: SeverityError},
		{name: "unterminated", data: "---\nname: demo\ndescription: d\n", wantRule: RuleFrontmatter, severity: SeverityError},
		{name: "invalid yaml", data: "---\nname: [demo\n---\n", wantRule: RuleFrontmatter, severity: SeverityError},
		{name: "scalar front matter", data: "---\njust text\n---\n", wantRule: RuleFrontmatter, severity: SeverityError},
		{name: "duplicate key", data: "---\nname: demo\nname: demo\ndescription: d\n---\n", wantRule: RuleFrontmatter, severity: SeverityError},
		{name: "empty front matter", data: "---\n---\nBody\n", wantRule: RuleName, severity: SeverityError},
		{name: "missing name", data: "---\ndescription: d\n---\n", wantRule: RuleName, severity: SeverityError},
		{name: "uppercase name", data: "---\nname: Demo\ndescription: d\n---\n", wantRule: RuleName, severity: SeverityError},
		{name: "double hyphen", data: "---\nname: de--mo\ndescription: d\n---\n", wantRule: RuleName, severity: SeverityError},
		{name: "leading hyphen", data: "---\nname: -demo\ndescription: d\n---\n", wantRule: RuleName, severity: SeverityError},
		{name: "name too long", data: "---\nname: " + long(65) + "\ndescription: d\n---\n", wantRule: RuleName, severity: SeverityError},
		{name: "name mismatch", data: "---\nname: other\ndescription: d\n---\n", wantRule: RuleNameMismatch, severity: SeverityError},
		{name: "missing description", data: "---\nname: demo\n---\n", wantRule: RuleDescription, severity: SeverityError},
		{name: "blank description", data: "---\nname: demo\ndescription: '  '\n---\n", wantRule: RuleDescription, severity: SeverityError},
		{name: "description too long", data: "---\nname: demo\ndescription: " + long(1025) + "\n---\n", wantRule: RuleDescription, severity: SeverityError},
		{name: "astral description counted as JavaScript does", data: "---\nname: demo\ndescription: " + strings.Repeat("😀", 513) + "\n---\n", wantRule: RuleDescription, severity: SeverityError},
		{name: "compatibility too long", data: "---\nname: demo\ndescription: d\ncompatibility: " + long(501) + "\n---\n", wantRule: RuleCompatibility, severity: SeverityError},
		{name: "compatibility not a string", data: "---\nname: demo\ndescription: d\ncompatibility: [a]\n---\n", wantRule: RuleCompatibility, severity: SeverityError},
		{name: "metadata not a map", data: "---\nname: demo\ndescription: d\nmetadata: [a]\n---\n", wantRule: RuleMetadata, severity: SeverityError},
		{name: "metadata nested map", data: "---\nname: demo\ndescription: d\nmetadata:\n  a:\n    b: c\n---\n", wantRule: RuleMetadata, severity: SeverityError},
		{name: "metadata list of maps", data: "---\nname: demo\ndescription: d\nmetadata:\n  a:\n    - b: c\n---\n", wantRule: RuleMetadata, severity: SeverityError},
		{name: "allowed-tools map", data: "---\nname: demo\ndescription: d\nallowed-tools:\n  a: b\n---\n", wantRule: RuleField, severity: SeverityError},
		{name: "versions disagree", data: "---\nname: demo\ndescription: d\nversion: 1.0.0\nmetadata:\n  version: 1.0.1\n---\n", wantRule: RuleVersion, severity: SeverityError},
		{name: "bad version chars", data: "---\nname: demo\ndescription: d\nversion: 1.0/2\n---\n", wantRule: RuleVersion, severity: SeverityError},
		{name: "empty version", data: "---\nname: demo\ndescription: d\nversion: ''\n---\n", wantRule: RuleVersion, severity: SeverityError},
		{name: "version not scalar", data: "---\nname: demo\ndescription: d\nversion: [1]\n---\n", wantRule: RuleVersion, severity: SeverityError},
		{name: "unknown key warns", data: "---\nname: demo\ndescription: d\nauthor: me\n---\n", wantRule: RuleUnknownKey, severity: SeverityWarning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			folder := "demo"
			if tt.name == "name at limit" {
				folder = "y"
			}
			s, ps := ParseSkill("skills/demo/SKILL.md", folder, []byte(tt.data), testLimits)
			if tt.wantRule == "" {
				if len(ps) != 0 {
					t.Fatalf("unexpected problems: %v", ps)
				}
				if s.Name != "demo" {
					t.Errorf("name = %q", s.Name)
				}
				if tt.check != nil {
					tt.check(t, s)
				}
				return
			}
			found := false
			for _, p := range ps {
				if p.Rule == tt.wantRule && p.Severity == tt.severity {
					found = true
				}
				if p.Path != "skills/demo/SKILL.md" || p.Message == "" {
					t.Errorf("problem %+v lacks path or message", p)
				}
			}
			if !found {
				t.Errorf("want a %s %q problem, got %v", tt.severity, tt.wantRule, ps)
			}
			if got := HasError(ps); got != (tt.severity == SeverityError) {
				t.Errorf("HasError = %v", got)
			}
		})
	}
}

func TestValidNameAndVersion(t *testing.T) {
	for _, n := range []string{"a", "a1", "code-review", "x-1-y", strings.Repeat("a", 64)} {
		if !ValidName(n) {
			t.Errorf("ValidName(%q) = false", n)
		}
	}
	for _, n := range []string{"", "A", "a_b", "a--b", "-a", "a-", strings.Repeat("a", 65), "a.b", "é"} {
		if ValidName(n) {
			t.Errorf("ValidName(%q) = true", n)
		}
	}
	for _, v := range []string{"1", "1.0.0", "v1.2.3-rc.1+build.5", "0.0.0+abcdef012345"} {
		if !ValidVersion(v) {
			t.Errorf("ValidVersion(%q) = false", v)
		}
	}
	for _, v := range []string{"", "1 0", "1/0", "1_0", strings.Repeat("1", 65)} {
		if ValidVersion(v) {
			t.Errorf("ValidVersion(%q) = true", v)
		}
	}
}

// testLimits are the configuration's default front matter limits.
var testLimits = Limits{MaxFrontmatterBytes: 64 << 10, MaxKeys: 64, MaxListItems: 64, MaxValueChars: 1024, MaxTagChars: 128, MaxDepth: 16, MaxValueProblems: 10}
