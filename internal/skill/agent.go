package skill

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// AgentMD is the validated front matter of one agent-md file.
type AgentMD struct {
	Name                   string
	Description            string
	Tools                  []string
	ModelRole              string
	TimeoutSeconds         int
	PrefillTimeoutSeconds  int
	Visibility             string
	EmitStructuredFindings bool
	Metadata               Meta
	// Version is the declared version (version, else metadata.version), or
	// "" when none is declared.
	Version string
}

// agentKeys are the front matter keys of an agent-md file.
var agentKeys = map[string]bool{
	"name": true, "description": true, "tools": true, "modelRole": true, "timeoutSeconds": true,
	"prefillTimeoutSeconds": true, "visibility": true, "emitStructuredFindings": true, "version": true, "metadata": true,
}

// agentOwnLength are the keys whose length rules of their own replace
// max_value_chars; a sub-agent's description is bounded only by
// max_frontmatter_bytes, as netclaw sets no limit.
var agentOwnLength = map[string]bool{"name": true, "description": true, "version": true}

// ParseAgent validates the agent-md bytes data found at path, for an agent
// whose file (or folder) is named want, within the front matter limits
// lim. The rules are netclaw's, so that the server never publishes an
// agent a client will reject, plus the server's limits and character
// rules.
func ParseAgent(path, want string, data []byte, lim Limits) (AgentMD, []Problem) {
	var a AgentMD
	var ps []Problem
	errf := func(rule, format string, args ...any) { ps = append(ps, Errorf(path, rule, format, args...)) }

	switch {
	case !utf8.Valid(data):
		errf(RuleEncoding, "agent file is not valid UTF-8; save it as UTF-8")
		return a, ps
	case bytes.HasPrefix(data, utf8BOM):
		errf(RuleEncoding, "agent file starts with a UTF-8 byte order mark, which netclaw rejects; save it without BOM")
		return a, ps
	case !startsWithDelimiter(data):
		errf(RuleFrontmatter, "agent file must start with `---` at its first byte, opening a YAML front matter block")
		return a, ps
	}
	fields, body, err := parseFrontmatter(data, lim)
	if err != nil {
		ps = append(ps, frontmatterProblem(path, err))
		return a, ps
	}

	var metaVersion string
	var haveTop bool
	for _, f := range fields {
		switch f.key {
		case "name":
			a.Name = stringField(f, errf)
		case "description":
			a.Description = stringField(f, errf)
		case "tools":
			tools, ok := stringSeq(f.value)
			if !ok {
				errf(RuleField, "tools must be a list of strings, e.g. [read_file, grep]")
			}
			a.Tools = tools
		case "modelRole":
			a.ModelRole = enumField(f.value, "modelRole", []string{"Main", "Compaction"}, errf)
		case "visibility":
			a.Visibility = enumField(f.value, "visibility", []string{"user-facing", "internal"}, errf)
		case "timeoutSeconds":
			a.TimeoutSeconds = intField(f.value, "timeoutSeconds", 5, 600, errf)
		case "prefillTimeoutSeconds":
			a.PrefillTimeoutSeconds = intField(f.value, "prefillTimeoutSeconds", 5, 3600, errf)
		case "emitStructuredFindings":
			if f.value.Kind != yaml.ScalarNode || f.value.Tag != "!!bool" {
				errf(RuleField, "emitStructuredFindings must be true or false")
			} else {
				a.EmitStructuredFindings, _ = strconv.ParseBool(f.value.Value)
			}
		case "version":
			v, ok := scalar(f.value)
			if !ok || !ValidVersion(v) {
				errf(RuleVersion, "version %q must be 1-%d characters of A-Z a-z 0-9 . + - (e.g. 1.2.0)", v, MaxVersionLen)
			}
			a.Version, haveTop = v, true
		case "metadata":
			m, err := stringMap(f.value)
			if err != nil {
				errf(RuleMetadata, "metadata %s", err)
			}
			a.Metadata = m
		}
		if !agentKeys[f.key] {
			ps = append(ps, Warnf(path, RuleUnknownKey, "unknown front matter key %q is ignored (keys are camelCase: tools, modelRole, timeoutSeconds, prefillTimeoutSeconds, visibility, emitStructuredFindings, version, metadata)", f.key))
		}
	}
	ps = append(ps, valueProblems(path, fields, agentKeys, agentOwnLength, lim)...)
	if v, ok := a.Metadata.Get("version"); ok {
		metaVersion = v
		switch {
		case haveTop && v != a.Version:
			errf(RuleVersion, "version %q and metadata.version %q disagree; keep one", a.Version, v)
		case !haveTop && !ValidVersion(v):
			errf(RuleVersion, "metadata.version %q must be 1-%d characters of A-Z a-z 0-9 . + - (e.g. 1.2.0)", v, MaxVersionLen)
		case !haveTop:
			a.Version = metaVersion
		}
	}

	switch {
	case a.Name == "":
		errf(RuleName, "name is required; set `name: %s`", want)
	case !ValidName(a.Name):
		errf(RuleName, "name %q must be 1-%d lowercase letters, digits and single hyphens", a.Name, MaxNameLen)
	case a.Name != want:
		errf(RuleNameMismatch, "name %q must equal the file (or folder) name %q; rename one of them", a.Name, want)
	}
	if strings.TrimSpace(a.Description) == "" {
		errf(RuleDescription, "description is required: say what the sub-agent does")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		errf(RuleBody, "the agent's instructions after the front matter are empty; write its prompt there")
	}
	ps = append(ps, checkText(path, body, bodyLine(data, body))...)
	return a, ps
}

func stringSeq(n *yaml.Node) ([]string, bool) {
	if isNull(n) {
		return nil, true
	}
	if n.Kind != yaml.SequenceNode {
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	for _, item := range n.Content {
		s, ok := scalar(item)
		if !ok || item.Tag != "!!str" {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func enumField(n *yaml.Node, key string, allowed []string, errf func(string, string, ...any)) string {
	s, ok := scalar(n)
	for _, a := range allowed {
		if ok && s == a {
			return s
		}
	}
	errf(RuleField, "%s %q must be one of %s", key, s, strings.Join(allowed, ", "))
	return ""
}

func intField(n *yaml.Node, key string, lo, hi int, errf func(string, string, ...any)) int {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		if v, err := strconv.Atoi(n.Value); err == nil && v >= lo && v <= hi {
			return v
		}
	}
	errf(RuleField, "%s must be a whole number from %d to %d, got %q", key, lo, hi, n.Value)
	return 0
}
