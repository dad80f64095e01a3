package skill

import (
	"strings"
	"testing"
)

func TestFieldCharacters(t *testing.T) {
	const head = "---\nname: demo\n"
	tests := []struct {
		name  string
		data  string
		parts []string // nil: no problem at all
	}{
		{"tab and newline in a description", head + "description: \"a\\tb\\nc\"\n---\n", nil},
		{"block scalar", head + "description: |\n  line one\n  line two\n---\n", nil},
		{"emoji with joiners", head + "description: \"👩\u200d💻 and \u0645\u06cc\u200cخواهم\"\n---\n", nil},
		{"escape sequence", head + "description: \"red \\e[31m\"\n---\n", []string{"description holds U+001B (a control character) at character 5 (the value starts on line 3)"}},
		{"carriage return", head + "description: \"ok\\rforged\"\n---\n", []string{"U+000D (a control character) at character 3"}},
		{"line separator", head + "description: \"a\\u2028b\"\n---\n", []string{"U+2028 (a line or paragraph separator)"}},
		{"override in a tag", head + "description: d\nmetadata:\n  tags: [\"a\u202eb\"]\n---\n", []string{"metadata.tags[0] holds U+202E (a bidirectional control) at character 2 (the value starts on line 5)"}},
		{"isolate in a metadata value", head + "description: d\nmetadata:\n  owner: \"\u2066x\u2069\"\n---\n", []string{"metadata.owner holds U+2066 (a bidirectional control) at character 1"}},
		{"newline in a tag", head + "description: d\nmetadata:\n  tags: [\"a\\nb\"]\n---\n", []string{"metadata.tags[0] holds U+000A (a control character)"}},
		{"zero width space in license", head + "description: d\nlicense: \"MIT\u200b\"\n---\n", []string{"license holds U+200B (an invisible formatting character) at character 4"}},
		{"control in a metadata key", head + "description: d\nmetadata:\n  \"a\\e\": b\n---\n", []string{`"metadata.a\x1b" holds U+001B`, "the key starts on line 5"}},
		{"tag character", head + "description: \"x\U000E0041\"\n---\n", []string{"U+E0041 (an invisible formatting character)"}},
		{"subdivision flags", head + "description: \"Made in \U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F and \U0001F3F4\U000E0067\U000E0062\U000E0077\U000E006C\U000E0073\U000E007F\"\n---\n", nil},
		{"text hidden behind a flag", head + "description: \"\U0001F3F4\U000E0069\U000E0067\U000E006E\U000E007F\"\n---\n", []string{"U+E0069 (an invisible formatting character) at character 2"}},
		{"arabic number sign and end of ayah", head + "description: \"\u0600\u0661\u0662 \u06dd\u0663\"\n---\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, ps := ParseSkill("skills/demo/SKILL.md", "demo", []byte(tt.data), testLimits)
			if tt.parts == nil {
				if len(ps) != 0 {
					t.Fatalf("unexpected problems: %v", ps)
				}
				return
			}
			wantProblem(t, ps, RuleCharacter, SeverityError, tt.parts...)
		})
	}
}

func TestAgentFieldCharacters(t *testing.T) {
	_, ps := ParseAgent("agents/demo.md", "demo", []byte("---\nname: demo\ndescription: \"d\\e[2J\"\ntools: [\"read\u202efile\"]\n---\nBody\n"), testLimits)
	wantProblem(t, ps, RuleCharacter, SeverityError, "description holds U+001B")
	wantProblem(t, ps, RuleCharacter, SeverityError, "tools[0] holds U+202E")
}

// TestValueProblemsBounded: a file full of bad values gets a bounded
// number of problems: max_value_problems of them, then one naming the
// key that counts the rest; 0 reports all.
func TestValueProblemsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("---\nname: demo\ndescription: d\nmetadata:\n")
	for i := range 60 {
		b.WriteString("  k" + strings.Repeat("x", i) + ": \"\\e\"\n")
	}
	b.WriteString("---\n")
	for _, tt := range []struct {
		name   string
		limit  int
		want   int    // problems
		counts string // "" for none
	}{
		{"the default", 10, 11, "50 more values break the character or length rules (at most 10 are reported, max_value_problems)"},
		{"configured", 3, 4, "57 more values break the character or length rules (at most 3 are reported, max_value_problems)"},
		{"off", 0, 60, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lim := testLimits
			lim.MaxValueProblems = tt.limit
			_, ps := ParseSkill("skills/demo/SKILL.md", "demo", []byte(b.String()), lim)
			if len(ps) != tt.want {
				t.Fatalf("%d problems, want %d: %v", len(ps), tt.want, ps)
			}
			if tt.counts != "" {
				wantProblem(t, ps, RuleFrontmatter, SeverityError, tt.counts)
			}
		})
	}
}

func TestBodyCharacters(t *testing.T) {
	const head = "---\nname: demo\ndescription: d\n---\n"
	tests := []struct {
		name  string
		body  string
		parts []string // nil: no problem
	}{
		{"plain", "# Title\n\nText, emoji 👩\u200d💻, Persian \u0645\u06cc\u200cخواهم.\n", nil},
		{"trojan source", "line\nif x \u202e{ admin }\u2066\n", []string{"holds 2 bidirectional or invisible characters, the first U+202E (a bidirectional control) at line 6, column 6"}},
		{"zero width", "a\u200bb\n", []string{"U+200B (an invisible character) at line 5, column 2"}},
		{"bom inside", "\ufeffx\n", []string{"U+FEFF (an invisible character) at line 5, column 1"}},
		{"tag characters", "x\U000E0041\n", []string{"U+E0041 (an invisible tag character)"}},
		{"subdivision flag", "Made in \U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F.\n", nil},
		{"a flag's tags, then hidden text", "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F\U000E0068\n", []string{"holds 1 bidirectional or invisible characters, the first U+E0068 (an invisible tag character) at line 5, column 8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, ps := ParseSkill("skills/demo/SKILL.md", "demo", []byte(head+tt.body), testLimits)
			_, aps := ParseAgent("agents/demo.md", "demo", []byte(head+tt.body), testLimits)
			if tt.parts == nil {
				if len(ps)+len(aps) != 0 {
					t.Fatalf("unexpected problems: %v %v", ps, aps)
				}
				return
			}
			wantProblem(t, ps, RuleCharacter, SeverityWarning, tt.parts...)
			wantProblem(t, aps, RuleCharacter, SeverityWarning, tt.parts...)
			if HasError(ps) || HasError(aps) {
				t.Errorf("a warning must not keep the item out: %v %v", ps, aps)
			}
		})
	}
}

func TestCheckText(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string // "" means no problem
	}{
		{"plain", "hello\n", ""},
		{"leading bom", "\ufeffhello\n", ""},
		{"bom later", "hello\n\ufeff\n", "U+FEFF (an invisible character) at line 2, column 1"},
		{"isolate", "a\nb\u2067c", "U+2067 (a bidirectional control) at line 2, column 2"},
		{"word joiner", "a\u2060b", "U+2060"},
		{"binary with NUL", "\x00\u202e", ""},
		{"not utf-8", "\xff\u202e", ""},
	}
	for _, tt := range tests {
		ps := CheckText("skills/demo/notes.md", []byte(tt.data))
		switch {
		case tt.want == "" && len(ps) != 0:
			t.Errorf("%s: unexpected %v", tt.name, ps)
		case tt.want != "":
			wantProblem(t, ps, RuleCharacter, SeverityWarning, tt.want)
		}
	}
}

func TestProblemStringEscapes(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Errorf("skills/code-review/SKILL.md", RuleName, "name %q bad", "x"), `skills/code-review/SKILL.md: name: name "x" bad`},
		{Errorf("skills/café/é.md", RuleName, "ok"), "skills/café/é.md: name: ok"},
		{Warnf("skills/a\nskills/b: name", RuleName, "m"), `"skills/a\nskills/b: name": name: warning: m`},
		{Errorf("skills/\x1b[2Jx", RuleName, "m"), `"skills/\x1b[2Jx": name: m`},
		{Errorf("skills/\u202egnp.exe", RuleName, "m"), `"skills/\u202egnp.exe": name: m`},
		{Errorf("skills/\xff", RuleName, "m"), `"skills/\xff": name: m`},
		{Errorf("p", RuleRead, "cannot read: a\nb"), `p: read: "cannot read: a\nb"`},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("String() = %s, want %s", got, tt.want)
		}
	}
}
