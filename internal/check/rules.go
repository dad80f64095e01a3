package check

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Rule names one thing a client relies on. The IDs are stable: reports,
// the JSON output and docs/check.md use them.
type Rule string

// Severity says whether a broken rule stops clients (an error) or only
// some of them, or only some of the time (a warning).
type Severity string

// Severities.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Rules a feed must keep; each is an error.
const (
	RuleFetch          Rule = "fetch"            // the request failed: connection, timeout, a redirect the client refuses, or one taking a token to another origin
	RuleStatus         Rule = "status"           // an advertised URL or href did not answer 200
	RuleSize           Rule = "size"             // a response is larger than the bound
	RuleJSON           Rule = "json"             // a document is not JSON of the expected shape
	RuleSchema         Rule = "schema"           // the RFC index's $schema is not byte-exact
	RuleKind           Rule = "kind"             // a tree document's kind is wrong
	RuleName           Rule = "name"             // an invalid or repeated name, or one that differs between documents
	RuleDescription    Rule = "description"      // a description empty or over 1024 characters
	RuleVersion        Rule = "version"          // a missing version, or latestVersion not exactly one listed version
	RuleVersionOrder   Rule = "version-order"    // versions not newest first
	RuleType           Rule = "type"             // type other than skill-md/archive (agent-md for sub-agents), or resources on a skill-md
	RuleDigestFormat   Rule = "digest-format"    // a digest that is not sha256: plus 64 lowercase hex
	RuleDigestMismatch Rule = "digest-mismatch"  // the bytes served do not hash to the advertised digest
	RuleURL            Rule = "url"              // an artifact URL that is not absolute, or not on the feed's origin
	RuleHref           Rule = "href"             // a native-tree href that is not root-relative
	RuleEncoding       Rule = "encoding"         // Content-Encoding on a request that accepted none
	RuleZipPath        Rule = "zip-path"         // an archive entry with an absolute, empty, . or .. path, or two paths equal ignoring case
	RuleZipEntry       Rule = "zip-entry"        // a symlink or other non-regular entry, or a mode beyond 0777
	RuleZipSize        Rule = "zip-size"         // an archive over the size or entry-count bound, or not a zip
	RuleZipContent     Rule = "zip-content"      // no SKILL.md at the root, or a text file that is not UTF-8
	RuleText           Rule = "text"             // SKILL.md or agent.md that is not strict UTF-8, or unreadable front matter
	RuleFrontmatter    Rule = "frontmatter-name" // the front matter name differs from the advertised name
	RuleConsistency    Rule = "consistency"      // two documents of the feed disagree (RFC entry vs native tree, resources vs archive, legacy vs RFC)
	RuleAgentCard      Rule = "agent-card"       // the agent card is not an A2A v0.3.0 AgentCard
	RuleMCP            Rule = "mcp"              // the MCP endpoint breaks the skills extension: capabilities, resultType, ttlMs, cacheScope, entry shape, cursors, error codes
)

// Rules whose breaking only warns.
const (
	RuleAbsent         Rule = "absent"            // an optional surface (manifest, legacy index, agent card) is 404
	RuleManifestSchema Rule = "manifest-schema"   // /manifest.json's $schema differs from the native tree's
	RuleRedirect       Rule = "http-redirect"     // an authenticated request was redirected within the feed's origin (netclaw drops its key)
	RuleCompression    Rule = "http-compression"  // an artifact is sent with Content-Encoding to a client that accepts it
	RuleHead           Rule = "http-head"         // HEAD does not answer like GET
	RuleContentType    Rule = "http-content-type" // a Content-Type clients misread
	RuleAgentRegistry  Rule = "agent-registry"    // the agent card breaks a rule only agent registries apply (semver version, non-empty skill fields, tags arrays)
)

// severity is every rule's severity.
var severity = map[Rule]Severity{
	RuleFetch: Error, RuleStatus: Error, RuleSize: Error, RuleJSON: Error, RuleSchema: Error,
	RuleKind: Error, RuleName: Error, RuleDescription: Error, RuleVersion: Error,
	RuleVersionOrder: Error, RuleType: Error, RuleDigestFormat: Error, RuleDigestMismatch: Error,
	RuleURL: Error, RuleHref: Error, RuleEncoding: Error, RuleZipPath: Error, RuleZipEntry: Error,
	RuleZipSize: Error, RuleZipContent: Error, RuleText: Error, RuleFrontmatter: Error,
	RuleConsistency: Error, RuleAgentCard: Error, RuleMCP: Error,

	RuleAbsent: Warning, RuleManifestSchema: Warning, RuleRedirect: Warning,
	RuleCompression: Warning, RuleHead: Warning, RuleContentType: Warning, RuleAgentRegistry: Warning,
}

// Severity is how bad breaking r is.
func (r Rule) Severity() Severity {
	if s, ok := severity[r]; ok {
		return s
	}
	return Error
}

// Rules lists every rule, sorted.
func Rules() []Rule {
	return slices.Sorted(maps.Keys(severity))
}

// Violation is one broken rule: what, where and why. Every error the
// Client returns is one, or several joined.
type Violation struct {
	Rule   Rule
	Item   string // "skill code-review 1.0.0", "RFC index", ...
	URL    string
	Msg    string
	Status int // the HTTP status, for RuleStatus
	// cause is the error a RuleFetch violation reports, to tell a server
	// that does not answer at all (unreachable) from one request failing.
	cause error
}

func (v *Violation) Error() string {
	var b strings.Builder
	if v.Item != "" {
		b.WriteString(v.Item + ": ")
	}
	b.WriteString(v.Msg)
	if v.URL != "" {
		b.WriteString(" (" + v.URL + ")")
	}
	return b.String() + " [" + string(v.Rule) + "]"
}

func bad(rule Rule, format string, args ...any) *Violation {
	return &Violation{Rule: rule, Msg: fmt.Sprintf(format, args...)}
}

// at fills in the item and URL of err's violations where they have none.
func at(err error, itemName, u string) error {
	var v *Violation
	if errors.As(err, &v) {
		if v.Item == "" {
			v.Item = itemName
		}
		if v.URL == "" {
			v.URL = u
		}
	}
	return err
}
