package item

// Kind is what an item is: a skill or a sub-agent. Its String is the one
// word every published form uses for it: the native tree's document kinds
// (`skill`, `subagent-index`), the catalogue's `?kind=`, the metrics'
// `kind` label and the content fingerprint.
type Kind uint8

// The kinds, in the order everything is published in: skills first.
const (
	KindSkill Kind = iota
	KindSubagent
)

// String is the kind's word: "skill" or "subagent".
func (k Kind) String() string {
	if k == KindSubagent {
		return "subagent"
	}
	return "skill"
}

// ParseKind is the kind String names s, and false for any other word.
func ParseKind(s string) (Kind, bool) {
	for _, k := range []Kind{KindSkill, KindSubagent} {
		if k.String() == s {
			return k, true
		}
	}
	return 0, false
}
