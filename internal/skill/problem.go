// Package skill parses and validates SKILL.md files and agent-md files.
//
// It is pure: it works on bytes the caller read and reports every finding
// as a Problem value. It must not import any other internal package: the
// filesystem layout (internal/scan), HTTP and configuration build on it.
package skill

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Severity says whether a problem keeps an item out of the catalogue.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Rule names are stable identifiers: `skillserver validate --format json`
// prints them, and users grep for them.
const (
	RuleFrontmatter   = "frontmatter"
	RuleName          = "name"
	RuleNameMismatch  = "name-mismatch"
	RuleDescription   = "description"
	RuleCompatibility = "compatibility"
	RuleMetadata      = "metadata"
	RuleUnknownKey    = "unknown-key"
	RuleVersion       = "version"
	RuleEncoding      = "encoding"
	RuleLayout        = "layout"
	RuleSymlink       = "symlink"
	RuleFileType      = "file-type"
	RuleLimit         = "limit"
	RuleResourcePath  = "resource-path"
	RuleDuplicate     = "duplicate"
	RuleRead          = "read"
	RuleBody          = "body"
	RuleField         = "field"
	RuleStale         = "stale"
	RuleCharacter     = "character"
)

// Problem is one finding about one file or folder.
type Problem struct {
	Path     string   `json:"path"` // the root as configured, then the slash path below it
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
}

// String renders p as `path: rule: message`, marking warnings. A path or
// message holding anything unprintable (a newline, an escape sequence, a
// bidirectional control, bytes that are not UTF-8) is printed quoted, Go
// style, so that a file name cannot forge a line of output or restyle a
// terminal; ordinary text is printed as it is.
func (p Problem) String() string {
	if p.Severity == SeverityWarning {
		return fmt.Sprintf("%s: %s: warning: %s", printable(p.Path), p.Rule, printable(p.Message))
	}
	return fmt.Sprintf("%s: %s: %s", printable(p.Path), p.Rule, printable(p.Message))
}

// printable returns s unchanged when every character of it is printable,
// else s quoted with strconv.Quote.
func printable(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Errorf returns an error-severity problem.
func Errorf(path, rule, format string, args ...any) Problem {
	return Problem{Path: path, Rule: rule, Severity: SeverityError, Message: fmt.Sprintf(format, args...)}
}

// Warnf returns a warning-severity problem.
func Warnf(path, rule, format string, args ...any) Problem {
	return Problem{Path: path, Rule: rule, Severity: SeverityWarning, Message: fmt.Sprintf(format, args...)}
}

// HasError reports whether any problem in ps is an error.
func HasError(ps []Problem) bool {
	for _, p := range ps {
		if p.Severity == SeverityError {
			return true
		}
	}
	return false
}
