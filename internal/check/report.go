package check

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Report is what Run found: the shape of `skillserver check --format
// json` (api/schemas/check-report.schema.json).
type Report struct {
	URL      string    `json:"url"`
	OK       bool      `json:"ok"` // no errors: clients will work
	Summary  Summary   `json:"summary"`
	Findings []Finding `json:"findings"`
}

// Summary counts what was checked and what was found.
type Summary struct {
	Errors           int `json:"errors"`
	Warnings         int `json:"warnings"`
	Skills           int `json:"skills"`
	SkillVersions    int `json:"skillVersions"`
	Subagents        int `json:"subagents"`
	SubagentVersions int `json:"subagentVersions"`
	Downloads        int `json:"downloads"`
	Requests         int `json:"requests"`
}

// Finding is one broken rule.
type Finding struct {
	Severity Severity `json:"severity"`
	Rule     Rule     `json:"rule"`
	Item     string   `json:"item"`
	URL      string   `json:"url,omitempty"`
	Message  string   `json:"message"`
}

// newReport sorts the violations into findings, errors first, and keeps a
// path token out of every URL.
func newReport(base string, sum Summary, vs []*Violation, token string) *Report {
	redact := func(s string) string {
		if token == "" {
			return s
		}
		return strings.ReplaceAll(s, "/t/"+token, "/t/REDACTED")
	}
	r := &Report{URL: redact(base), Findings: make([]Finding, 0, len(vs))}
	for _, v := range vs {
		r.Findings = append(r.Findings, Finding{Severity: v.Rule.Severity(), Rule: v.Rule, Item: cmp.Or(v.Item, "feed"), URL: redact(v.URL), Message: redact(v.Msg)})
	}
	slices.SortFunc(r.Findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Severity, b.Severity), cmp.Compare(a.Item, b.Item),
			cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.URL, b.URL), cmp.Compare(a.Message, b.Message))
	})
	r.Findings = slices.Compact(r.Findings)
	// Counted as listed: a finding met twice (the same URL walked from
	// two documents) is one.
	for _, f := range r.Findings {
		if f.Severity == Error {
			sum.Errors++
		} else {
			sum.Warnings++
		}
	}
	r.Summary = sum
	r.OK = sum.Errors == 0
	return r
}

// WriteJSON writes r as two-space indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes r for a reader: one block per finding, then the
// summary and the verdict.
func (r *Report) WriteText(w io.Writer) error {
	s := r.Summary
	var b strings.Builder
	fmt.Fprintf(&b, "check %s: %s (%s), %s (%s); %s, %s\n", r.URL,
		plural(s.Skills, "skill"), plural(s.SkillVersions, "version"), plural(s.Subagents, "sub-agent"),
		plural(s.SubagentVersions, "version"), plural(s.Downloads, "download"), plural(s.Requests, "request"))
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\n%-7s %s [%s]\n        %s\n", f.Severity, f.Item, f.Rule, f.Message)
		if f.URL != "" {
			fmt.Fprintf(&b, "        %s\n", f.URL)
		}
	}
	verdict := "clients will work with this feed"
	if !r.OK {
		verdict = "clients will NOT work with this feed"
	}
	fmt.Fprintf(&b, "\n%s, %s: %s\n", plural(s.Errors, "error"), plural(s.Warnings, "warning"), verdict)
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
