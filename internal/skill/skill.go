package skill

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Limits from the agentskills.io specification.
const (
	MaxDescriptionLen   = 1024
	MaxCompatibilityLen = 500
)

// SkillMD is the validated front matter of one SKILL.md; item.Skill is
// the published skill made from it.
type SkillMD struct {
	Name          string
	Description   string
	License       string
	Compatibility string
	AllowedTools  string
	Metadata      Meta // nil when absent
	// Version is the declared version (metadata.version, else a top-level
	// version), or "" when none is declared.
	Version string
}

var skillKeys = map[string]bool{
	"name": true, "description": true, "license": true, "compatibility": true,
	"metadata": true, "allowed-tools": true, "version": true,
}

// skillOwnLength are the keys whose length rules of their own replace
// max_value_chars.
var skillOwnLength = map[string]bool{"name": true, "description": true, "compatibility": true, "version": true}

// ParseSkill validates the SKILL.md bytes data found at path, for a skill
// whose folder is named folder, within the front matter limits lim. It
// returns the parsed skill and every problem found; the skill is
// publishable only when no problem is an error.
func ParseSkill(path, folder string, data []byte, lim Limits) (SkillMD, []Problem) {
	var s SkillMD
	var ps []Problem
	errf := func(rule, format string, args ...any) { ps = append(ps, Errorf(path, rule, format, args...)) }

	if !utf8.Valid(data) {
		errf(RuleEncoding, "SKILL.md is not valid UTF-8; save it as UTF-8")
		return s, ps
	}
	text := bytes.TrimPrefix(data, utf8BOM)
	if !startsWithDelimiter(text) {
		errf(RuleFrontmatter, "SKILL.md must start with a `---` line opening a YAML front matter block")
		return s, ps
	}
	fields, body, err := parseFrontmatter(text, lim)
	if err != nil {
		ps = append(ps, frontmatterProblem(path, err))
		return s, ps
	}

	var topVersion string
	var haveTop bool
	for _, f := range fields {
		switch f.key {
		case "name":
			s.Name = stringField(f, errf)
		case "description":
			s.Description = stringField(f, errf)
		case "license":
			if v, ok := scalar(f.value); ok || isNull(f.value) {
				s.License = v
			} else {
				errf(RuleField, "license must be a string")
			}
		case "compatibility":
			if v, ok := scalar(f.value); ok || isNull(f.value) {
				s.Compatibility = v
			} else {
				errf(RuleCompatibility, "compatibility must be a string")
			}
		case "allowed-tools":
			v, err := stringList(f.value)
			if err != nil {
				errf(RuleField, "allowed-tools %s", err)
			}
			s.AllowedTools = v
		case "metadata":
			m, err := stringMap(f.value)
			if err != nil {
				errf(RuleMetadata, "metadata %s", err)
			}
			s.Metadata = m
		case "version":
			v, ok := scalar(f.value)
			if !ok {
				errf(RuleVersion, "version must be a string such as \"1.2.0\"")
			}
			topVersion, haveTop = v, ok
		}
		if !skillKeys[f.key] {
			ps = append(ps, Warnf(path, RuleUnknownKey, "unknown front matter key %q is ignored; put custom data under metadata", f.key))
		}
	}
	ps = append(ps, valueProblems(path, fields, skillKeys, skillOwnLength, lim)...)
	ps = append(ps, checkText(path, body, bodyLine(text, body))...)

	switch {
	case s.Name == "":
		errf(RuleName, "name is required; set `name: %s`", folder)
	case !ValidName(s.Name):
		errf(RuleName, "name %q must be 1-%d lowercase letters, digits and single hyphens (e.g. code-review)", s.Name, MaxNameLen)
	case s.Name != folder:
		errf(RuleNameMismatch, "name %q must equal the skill folder name %q; rename one of them", s.Name, folder)
	}
	switch {
	case strings.TrimSpace(s.Description) == "":
		errf(RuleDescription, "description is required: say what the skill does and when to use it")
	case TextLen(s.Description) > MaxDescriptionLen:
		errf(RuleDescription, "description is %d characters; the limit is %d", TextLen(s.Description), MaxDescriptionLen)
	}
	if n := TextLen(s.Compatibility); n > MaxCompatibilityLen {
		errf(RuleCompatibility, "compatibility is %d characters; the limit is %d", n, MaxCompatibilityLen)
	}

	metaVersion, haveMeta := s.Metadata.Get("version")
	declared := topVersion
	if haveMeta {
		declared = metaVersion
	}
	switch {
	case haveMeta && haveTop && metaVersion != topVersion:
		errf(RuleVersion, "metadata.version %q and version %q disagree; keep one", metaVersion, topVersion)
	case !haveMeta && !haveTop:
		// Undeclared: the catalogue derives a version from the digest.
	case !ValidVersion(declared):
		errf(RuleVersion, "version %q must be 1-%d characters of A-Z a-z 0-9 . + - (e.g. 1.2.0)", declared, MaxVersionLen)
	default:
		s.Version = declared
	}
	return s, ps
}
