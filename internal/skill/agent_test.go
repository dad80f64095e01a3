package skill

import "testing"

func TestParseAgent(t *testing.T) {
	const head = "---\nname: demo\ndescription: Does things.\n"
	tests := []struct {
		name     string
		data     string
		wantRule string
		severity Severity
	}{
		{"minimal", head + "---\nYou do things.\n", "", ""},
		{"crlf", "---\r\nname: demo\r\ndescription: d\r\n---\r\nBody\r\n", "", ""},
		{"all fields", head + "tools: [read_file, grep]\nmodelRole: Compaction\ntimeoutSeconds: 600\nprefillTimeoutSeconds: 5\nvisibility: user-facing\nemitStructuredFindings: false\nversion: 1.0.0\nmetadata:\n  owner: me\n---\nBody\n", "", ""},
		{"bom", "\ufeff" + head + "---\nBody\n", RuleEncoding, SeverityError},
		{"not utf-8", head + "---\ncaf\xe9\n", RuleEncoding, SeverityError},
		{"leading newline", "\n" + head + "---\nBody\n", RuleFrontmatter, SeverityError},
		{"no front matter", "You do things.\n", RuleFrontmatter, SeverityError},
		{"unterminated", head + "Body\n", RuleFrontmatter, SeverityError},
		{"missing name", "---\ndescription: d\n---\nBody\n", RuleName, SeverityError},
		{"name mismatch", "---\nname: other\ndescription: d\n---\nBody\n", RuleNameMismatch, SeverityError},
		{"invalid name", "---\nname: Demo_1\ndescription: d\n---\nBody\n", RuleName, SeverityError},
		{"missing description", "---\nname: demo\n---\nBody\n", RuleDescription, SeverityError},
		{"blank description", "---\nname: demo\ndescription: ' '\n---\nBody\n", RuleDescription, SeverityError},
		{"empty body", head + "---\n", RuleBody, SeverityError},
		{"whitespace body", head + "---\n  \n\t\n", RuleBody, SeverityError},
		{"tools not a list", head + "tools: read_file\n---\nBody\n", RuleField, SeverityError},
		{"tools of numbers", head + "tools: [1, 2]\n---\nBody\n", RuleField, SeverityError},
		{"bad modelRole", head + "modelRole: main\n---\nBody\n", RuleField, SeverityError},
		{"timeout too low", head + "timeoutSeconds: 4\n---\nBody\n", RuleField, SeverityError},
		{"timeout too high", head + "timeoutSeconds: 601\n---\nBody\n", RuleField, SeverityError},
		{"timeout a string", head + "timeoutSeconds: \"60\"\n---\nBody\n", RuleField, SeverityError},
		{"timeout a float", head + "timeoutSeconds: 60.5\n---\nBody\n", RuleField, SeverityError},
		{"prefill too high", head + "prefillTimeoutSeconds: 3601\n---\nBody\n", RuleField, SeverityError},
		{"bad visibility", head + "visibility: public\n---\nBody\n", RuleField, SeverityError},
		{"findings not bool", head + "emitStructuredFindings: yes please\n---\nBody\n", RuleField, SeverityError},
		{"bad version", head + "version: 1.0 final\n---\nBody\n", RuleVersion, SeverityError},
		{"versions disagree", head + "version: 1.0.0\nmetadata:\n  version: 2.0.0\n---\nBody\n", RuleVersion, SeverityError},
		{"snake_case key warns", head + "model_role: Main\n---\nBody\n", RuleUnknownKey, SeverityWarning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, ps := ParseAgent("agents/demo.md", "demo", []byte(tt.data), testLimits)
			if tt.wantRule == "" {
				if len(ps) != 0 {
					t.Fatalf("unexpected problems: %v", ps)
				}
				if a.Name != "demo" {
					t.Errorf("name = %q", a.Name)
				}
				return
			}
			found := false
			for _, p := range ps {
				found = found || (p.Rule == tt.wantRule && p.Severity == tt.severity)
			}
			if !found {
				t.Errorf("want a %s %q problem, got %v", tt.severity, tt.wantRule, ps)
			}
			if HasError(ps) != (tt.severity == SeverityError) {
				t.Errorf("HasError = %v", HasError(ps))
			}
		})
	}
}

func TestParseAgentFields(t *testing.T) {
	a, ps := ParseAgent("a.md", "demo", []byte("---\nname: demo\ndescription: d\ntools: [a, b]\nmodelRole: Main\ntimeoutSeconds: 120\nprefillTimeoutSeconds: 3600\nvisibility: internal\nemitStructuredFindings: true\nmetadata:\n  version: 1.2.0\n---\nBody\n"), testLimits)
	if len(ps) != 0 {
		t.Fatal(ps)
	}
	if len(a.Tools) != 2 || a.ModelRole != "Main" || a.TimeoutSeconds != 120 || a.PrefillTimeoutSeconds != 3600 || a.Visibility != "internal" || !a.EmitStructuredFindings || a.Version != "1.2.0" {
		t.Errorf("agent = %+v", a)
	}
}
