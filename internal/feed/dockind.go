package feed

// DocKind names a JSON document the feed publishes. Where each kind lives
// is in paths.go; how it is made, in kinds below.
type DocKind int

// Document kinds.
const (
	DocRFCIndex DocKind = iota + 1
	DocManifest
	DocSkillIndex
	DocSkillPage
	DocSkill
	DocSkillVersion
	DocSubagentIndex
	DocSubagentPage
	DocSubagent
	DocSubagentVersion
	DocAPISkill
	DocAPISkillVersion
	DocAPISkillResources
	DocAPISubagent
	DocAPISubagentVersion
	DocAgentCard
	DocLegacyIndex
	DocScopedIndex
	DocAICatalog
	docKinds // one past the last
)

// valid reports whether k is a kind of the table, which every lookup by
// kind checks first: a DocKey made by hand may hold any number.
func (k DocKind) valid() bool { return k > 0 && k < docKinds }

// DocKey identifies one document of a snapshot.
type DocKey struct {
	Kind    DocKind
	Name    string
	Version string
	Page    string
}
