package item

import "testing"

// TestKindWords: each kind has its own word, and ParseKind reads back
// exactly the words String writes.
func TestKindWords(t *testing.T) {
	for k, want := range map[Kind]string{KindSkill: "skill", KindSubagent: "subagent"} {
		if got := k.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", k, got, want)
		}
		if back, ok := ParseKind(want); !ok || back != k {
			t.Errorf("ParseKind(%q) = %v, %v", want, back, ok)
		}
	}
	for _, s := range []string{"", "agent", "Skill", "skills", "sub-agent"} {
		if _, ok := ParseKind(s); ok {
			t.Errorf("ParseKind(%q) took it", s)
		}
	}
}
