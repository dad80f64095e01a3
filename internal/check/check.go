package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillserver/skillserver/api"
	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// Defaults of the command's flags that set Options.
const (
	DefaultConcurrency = 4
	DefaultTimeout     = 30 * time.Second // netclaw's budget per request
)

// ErrUsage marks an Options value Run cannot start from.
var ErrUsage = errors.New("invalid check options")

// Options say what to check and how. A zero bound is off, as 0 is in
// the server's configuration: Timeout 0 never times out, MaxBytes 0 reads
// any size, and Concurrency 0 fetches one item at a time.
type Options struct {
	// URL is the feed's base URL: http(s)://host[:port][/prefix], such as
	// https://skills.example.com or https://host/t/<token> for a
	// path-token feed.
	URL string
	// Token is sent as Authorization: Bearer on every request. Like a
	// path token, it never leaves the feed's origin: a redirect to another
	// scheme, host or port is not followed (a fetch error).
	Token string
	// Concurrency is how many items are fetched at once.
	Concurrency int
	// Timeout bounds each request.
	Timeout time.Duration
	// MaxBytes bounds the bytes read of one response.
	MaxBytes int64
	// Transport, if set, carries the requests; it should not decode
	// content encodings (the default is http.DefaultTransport's settings
	// with DisableCompression).
	Transport http.RoundTripper
	// Progress, if set, is called as items finish with the number of
	// items done and requests made so far.
	Progress func(items, requests int)
}

// FeedBase checks and normalises a feed URL: absolute http(s), no query, no
// fragment, no trailing slash.
func FeedBase(raw string) (string, error) {
	u, err := url.Parse(raw)
	switch {
	case !strings.Contains(raw, "://"):
		return "", fmt.Errorf("URL %q has no scheme: add http:// or https:// (http://%s)", raw, strings.TrimLeft(raw, "/"))
	case err != nil:
		return "", fmt.Errorf("URL %q: %w", raw, err)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return "", fmt.Errorf("URL %q: want http:// or https:// and a host", raw)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return "", fmt.Errorf("URL %q: no query, fragment or user: clients drop them (put a token in the path as /t/<token>, or use a bearer token)", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// Run checks the feed at o.URL and reports every broken rule. Its error
// is for options it cannot start from (ErrUsage); what the feed does
// wrong is in the report.
func Run(ctx context.Context, o Options) (*Report, error) {
	base, err := FeedBase(o.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	switch {
	case o.Concurrency < 0:
		return nil, fmt.Errorf("%w: concurrency %d: want 1 or more", ErrUsage, o.Concurrency)
	case o.Timeout < 0:
		return nil, fmt.Errorf("%w: timeout %s: want a positive duration", ErrUsage, o.Timeout)
	case o.MaxBytes < 0:
		return nil, fmt.Errorf("%w: max bytes %d: want a positive size", ErrUsage, o.MaxBytes)
	}
	conc := max(o.Concurrency, 1)
	rt := o.Transport
	if rt == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DisableCompression = true // every request says what it accepts
		tr.MaxIdleConnsPerHost = conc
		defer tr.CloseIdleConnections()
		rt = tr
	}
	path, _ := url.Parse(base)
	authed := o.Token != "" || strings.HasPrefix(path.Path, "/t/")
	c := New(base)
	c.HTTP = &http.Client{Transport: rt, Timeout: o.Timeout, CheckRedirect: keepCredentials(path, authed)}
	c.Token = o.Token
	c.Concurrency = conc
	c.MaxBytes = o.MaxBytes
	obs := &observer{authed: authed, progress: o.Progress, requests: c.requests}
	c.obs = obs

	var errs []error
	rfc, err := c.SyncSkills(ctx)
	if v := unreachable(err); v != nil {
		// Every other walk would fail the same way: one finding, not one
		// per document.
		return newReport(base, Summary{Requests: c.Requests}, []*Violation{v}, pathToken(path.Path)), nil
	}
	errs = append(errs, err)
	errs = append(errs, c.SyncAgents(ctx))
	errs = append(errs, c.WalkManifest(ctx, rfc))
	errs = append(errs, c.checkLegacy(ctx, rfc))
	errs = append(errs, c.checkAgentCard(ctx))
	errs = append(errs, c.WalkMCP(ctx, rfc))

	vs := append(violations(errors.Join(errs...)), obs.warnings...)
	sum := Summary{
		Skills: len(rfc), SkillVersions: obs.skillVersions,
		Subagents: obs.subagents, SubagentVersions: obs.agentVersions,
		Downloads: c.Downloads, Requests: c.Requests,
	}
	return newReport(base, sum, vs, pathToken(path.Path)), nil
}

// unreachable returns the finding for a feed whose first request could
// not connect at all (refused, no route, a name that does not resolve), or
// nil.
func unreachable(err error) *Violation {
	var v *Violation
	if !errors.As(err, &v) || v.Rule != RuleFetch {
		return nil
	}
	var op *net.OpError
	var dns *net.DNSError
	if !errors.As(v.cause, &dns) && !(errors.As(v.cause, &op) && op.Op == "dial") {
		return nil
	}
	return &Violation{Rule: RuleFetch, Item: "feed", URL: v.URL,
		Msg: v.Msg + ": nothing answers at this address, so nothing else was checked; is the server running, and are the host and port right?"}
}

// maxRedirects is how many redirects one request follows, as net/http's
// default policy.
const maxRedirects = 10

// keepCredentials is Run's redirect policy. An authenticated check (a
// bearer token, or a path token in the feed URL) follows a redirect only
// within the feed's origin: net/http's own policy keeps the Authorization
// header on any port and scheme of the same host (https to http included)
// and on its subdomains, and sends the URL it left, path token and all, as
// the Referer. A redirect elsewhere fails the request with what happened
// and what to fix, which the report lists as a fetch error. Without
// credentials there is nothing to leak, and check follows redirects as
// clients do.
func keepCredentials(feed *url.URL, authed bool) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if authed && !sameOrigin(req.URL, feed) {
			return fmt.Errorf("redirected to %s, another origin than the feed's %s: not followed, so the token stays on the feed's origin "+
				"(a client either drops its key on the redirect, as netclaw does, and asks that origin without it, or hands its key to that origin); "+
				"serve every URL of a private feed from the feed's own origin, without a redirect",
				req.URL.Redacted(), originOf(feed))
		}
		return nil
	}
}

// originOf is u's scheme, host and port, lower case, with the scheme's
// default port filled in.
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// sameOrigin reports whether a and b have one origin: scheme, host and
// port.
func sameOrigin(a, b *url.URL) bool { return originOf(a) == originOf(b) }

// pathToken is the token of a /t/<token> base path, to keep out of
// reports.
func pathToken(p string) string {
	rest, ok := strings.CutPrefix(p, "/t/")
	if !ok {
		return ""
	}
	tok, _, _ := strings.Cut(rest, "/")
	return tok
}

// violations flattens a tree of joined errors into its violations; an
// error that is not one becomes a fetch violation.
func violations(err error) []*Violation {
	switch e := err.(type) {
	case nil:
		return nil
	case *Violation:
		return []*Violation{e}
	case interface{ Unwrap() []error }:
		var out []*Violation
		for _, e := range e.Unwrap() {
			out = append(out, violations(e)...)
		}
		return out
	}
	var v *Violation
	if errors.As(err, &v) {
		return []*Violation{v}
	}
	return []*Violation{{Rule: RuleFetch, Msg: err.Error()}}
}

// checkLegacy reads the v0.1 index the way skillkit and OpenCode do, and
// requires its files to be those of the RFC feed's latest versions.
func (c *Client) checkLegacy(ctx context.Context, rfc []RFCEntry) error {
	const itemName = "legacy index"
	u := c.entry(pathLegacyIndex)
	var idx struct {
		Skills []struct {
			Name        string   `json:"name"`
			Description string   `json:"description"`
			Files       []string `json:"files"`
		} `json:"skills"`
	}
	if err := c.getJSON(ctx, itemName, u, mediaEntry, &idx); err != nil {
		var v *Violation
		if errors.As(err, &v) && v.Rule == RuleStatus && v.Status == http.StatusNotFound {
			c.obs.warn(&Violation{Rule: RuleAbsent, Item: itemName, URL: u, Msg: "no legacy v0.1 index (404): skillkit and OpenCode see no skills"})
			return nil
		}
		return err
	}
	if idx.Skills == nil {
		return &Violation{Rule: RuleJSON, Item: itemName, URL: u, Msg: "skills is missing or null, want a list"}
	}
	inRFC := map[string]bool{}
	for _, e := range rfc {
		inRFC[e.Name] = true
	}
	errs := make([]error, len(idx.Skills))
	c.each(len(idx.Skills), func(i int) {
		s := idx.Skills[i]
		itemName := "legacy skill " + s.Name
		fail := func(rule Rule, format string, args ...any) {
			errs[i] = errors.Join(errs[i], &Violation{Rule: rule, Item: itemName, URL: u, Msg: fmt.Sprintf(format, args...)})
		}
		switch {
		case !skill.ValidName(s.Name):
			fail(RuleName, "invalid name %q", s.Name)
			return
		case !slices.Contains(s.Files, skill.FileName):
			fail(RuleZipContent, "files does not list SKILL.md")
		case rfc != nil && !inRFC[s.Name]:
			fail(RuleConsistency, "the legacy index lists it, the RFC index does not")
		}
		c.mu.Lock()
		latest := c.Skills[s.Name]
		c.mu.Unlock()
		for _, f := range s.Files {
			if err := checkPath("file", f); err != nil {
				errs[i] = errors.Join(errs[i], at(err, itemName, u))
				continue
			}
			fu := c.entry(legacyFilePath(s.Name, f))
			as := mediaFile
			if f == skill.FileName {
				as = mediaMarkdown
			}
			b, err := c.get(ctx, itemName+" "+f, fu, as)
			if err != nil {
				errs[i] = errors.Join(errs[i], err)
				continue
			}
			if f == skill.FileName {
				errs[i] = errors.Join(errs[i], at(checkSkillMD(s.Name, b), itemName, fu))
			}
			if want, ok := latest.Sums[f]; ok && want != content.Sum(b) {
				errs[i] = errors.Join(errs[i], &Violation{Rule: RuleConsistency, Item: itemName + " " + f, URL: fu, Msg: "differs from the file of the RFC feed's latest version " + latest.Version})
			}
		}
	})
	return errors.Join(errs...)
}

// checkAgentCard validates the agent card at both its paths against the
// A2A v0.3.0 schema.
func (c *Client) checkAgentCard(ctx context.Context) error {
	const itemName = "agent card"
	schema, err := agentCardSchema()
	if err != nil {
		return err
	}
	var errs []error
	absent := 0
	paths := agentCardPaths
	for _, p := range paths {
		u := c.entry(p)
		b, err := c.get(ctx, itemName, u, mediaEntry)
		var v *Violation
		if errors.As(err, &v) && v.Rule == RuleStatus && v.Status == http.StatusNotFound {
			absent++
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			errs = append(errs, &Violation{Rule: RuleJSON, Item: itemName, URL: u, Msg: "not JSON: " + err.Error()})
			continue
		}
		if err := schema.Validate(doc); err != nil {
			errs = append(errs, &Violation{Rule: RuleAgentCard, Item: itemName, URL: u, Msg: "not an A2A v0.3.0 AgentCard: " + schemaErrors(err)})
		}
		for _, msg := range registryProblems(b) {
			c.obs.warn(&Violation{Rule: RuleAgentRegistry, Item: itemName, URL: u, Msg: msg})
		}
	}
	if absent == len(paths) {
		c.obs.warn(&Violation{Rule: RuleAbsent, Item: itemName, URL: c.entry(paths[0]), Msg: "no agent card at " + strings.Join(paths, " or ") + " (404): A2A gateways and catalogues see nothing"})
	}
	return errors.Join(errs...)
}

// registryProblems lists what agent registries that register an agent by
// its card's URL (a2aregistry.org and others) refuse beyond the A2A
// schema: a name, a description, an absolute http(s) url and a semver
// version, and for each skill a non-empty id, name and description and
// tags as an array of strings.
func registryProblems(card []byte) []string {
	var c struct {
		Name, Description, URL, Version string
		Skills                          []struct {
			ID, Name, Description string
			Tags                  *[]any
		}
	}
	if json.Unmarshal(card, &c) != nil {
		return nil // the schema check says why
	}
	var out []string
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	if blank(c.Name) || blank(c.Description) {
		out = append(out, "name and description must not be empty: agent registries refuse the card")
	}
	if u, err := url.Parse(c.URL); err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		out = append(out, fmt.Sprintf("url %q is not an absolute http(s) URL: agent registries refuse the card", c.URL))
	}
	if item.Semver(c.Version) != c.Version {
		out = append(out, fmt.Sprintf("version %q is not semver (such as 1.2.0, or 0.0.0-dev for an unreleased build): agent registries and manifests that require semver refuse it", c.Version))
	}
	for i, sk := range c.Skills {
		tags := sk.Tags != nil
		if tags {
			for _, t := range *sk.Tags {
				if _, ok := t.(string); !ok {
					tags = false
				}
			}
		}
		if blank(sk.ID) || blank(sk.Name) || blank(sk.Description) || !tags {
			out = append(out, fmt.Sprintf("skills[%d] (%q) needs a non-empty id, name and description and tags as an array of strings: agent registries refuse the card", i, sk.ID))
		}
	}
	return out
}

var (
	cardOnce   sync.Once
	cardSchema *jsonschema.Schema
	cardErr    error
)

// agentCardSchema compiles #/definitions/AgentCard of the bundled A2A
// schema, once.
func agentCardSchema() (*jsonschema.Schema, error) {
	cardOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(api.A2ASchema))
		if err != nil {
			cardErr = fmt.Errorf("the bundled A2A schema: %w", err)
			return
		}
		comp := jsonschema.NewCompiler()
		if err := comp.AddResource(api.A2ASchemaID, doc); err != nil {
			cardErr = fmt.Errorf("the bundled A2A schema: %w", err)
			return
		}
		cardSchema, cardErr = comp.Compile(api.A2ASchemaID + "#/definitions/AgentCard")
	})
	return cardSchema, cardErr
}

// schemaErrors is a validation error on one line: each leaf's place and
// message.
func schemaErrors(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var out []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil || len(ve.Causes) > 0 && u.InstanceLocation == "" && u.KeywordLocation == "" {
			continue
		}
		msg := u.Error.String()
		if strings.HasPrefix(msg, "validation failed") {
			continue
		}
		loc := u.InstanceLocation
		if loc == "" {
			loc = "/"
		}
		out = append(out, loc+": "+msg)
	}
	if len(out) == 0 {
		return strings.Join(strings.Fields(err.Error()), " ")
	}
	return strings.Join(out, "; ")
}
