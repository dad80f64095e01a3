package check

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
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

// WriteJSON writes r as two-space indented JSON. encoding/json escapes
// the C0 controls and U+2028/U+2029 but writes DEL, the C1 controls and
// the bidi controls as they are; WriteJSON escapes every character
// escapeText would, as \uXXXX, so the report is safe on a terminal too and
// decodes to the same strings.
func (r *Report) WriteJSON(w io.Writer) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	// Outside its strings JSON is ASCII, so every rune escaped here is in
	// a string, where \uXXXX means the same rune.
	out := buf.Bytes()
	var b strings.Builder
	for len(out) > 0 {
		c, n := utf8.DecodeRune(out)
		if c < 0x7f || printable(c) { // below DEL: printable, or layout
			b.Write(out[:n])
		} else {
			for _, u := range utf16.AppendRune(nil, c) {
				fmt.Fprintf(&b, `\u%04x`, u)
			}
		}
		out = out[n:]
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteText writes r for a reader: one block per finding, then the
// summary and the verdict. Every field goes through textf, which escapes
// it: a server cannot write control characters to the reader's terminal,
// or lines of its own into the report.
func (r *Report) WriteText(w io.Writer) error {
	s := r.Summary
	var b strings.Builder
	textf(&b, "check %s: %s (%s), %s (%s); %s, %s\n", r.URL,
		plural(s.Skills, "skill"), plural(s.SkillVersions, "version"), plural(s.Subagents, "sub-agent"),
		plural(s.SubagentVersions, "version"), plural(s.Downloads, "download"), plural(s.Requests, "request"))
	for _, f := range r.Findings {
		textf(&b, "\n%-7s %s [%s]\n        %s\n", f.Severity, f.Item, f.Rule, f.Message)
		if f.URL != "" {
			textf(&b, "        %s\n", f.URL)
		}
	}
	verdict := "clients will work with this feed"
	if !r.OK {
		verdict = "clients will NOT work with this feed"
	}
	textf(&b, "\n%s, %s: %s\n", plural(s.Errors, "error"), plural(s.Warnings, "warning"), verdict)
	_, err := io.WriteString(w, b.String())
	return err
}

// textf is the only way WriteText writes: format is the report's own
// layout, and every argument is a field, printed with escapeText.
func textf(b *strings.Builder, format string, fields ...any) {
	for i, f := range fields {
		fields[i] = escapeText(fmt.Sprint(f))
	}
	fmt.Fprintf(b, format, fields...)
}

// escapeText makes s safe to print on a terminal: every rune
// strconv.IsPrint rejects becomes its Go escape (\x1b, \a, \n, \x7f,
// \u009b, \u202e), and every byte of invalid UTF-8 \xNN. Those are the C0
// and C1 controls, DEL, and Unicode's format characters (the bidi
// overrides, embeddings, isolates and marks, zero-width characters), line
// and paragraph separators, spaces other than U+0020, private-use and
// unassigned code points. Printable text, backslashes included, is kept,
// so the quoted strings of messages (%q) read as before.
func escapeText(s string) string {
	i := strings.IndexFunc(s, func(c rune) bool { return !printable(c) })
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for s = s[i:]; s != ""; {
		c, n := utf8.DecodeRuneInString(s)
		switch {
		case c == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case printable(c):
			b.WriteString(s[:n])
		default:
			q := strconv.QuoteRune(c)
			b.WriteString(q[1 : len(q)-1])
		}
		s = s[n:]
	}
	return b.String()
}

// printable reports whether a terminal shows c as itself (see escapeText).
// utf8.RuneError counts as not printable, for invalid UTF-8; a valid
// U+FFFD is told apart by its length.
func printable(c rune) bool { return c != utf8.RuneError && strconv.IsPrint(c) }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
