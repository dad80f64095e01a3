package page

import (
	"strings"

	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// The install chooser of an item's page: one panel per client, of which
// the reader picks one with a radio button (CSS shows the panel of the
// checked one, so the choice works without JavaScript).

// The npm releases the install lines pin, which are the ones the interop
// tests run: a Node and a CLI release we test against, not whatever npx
// finds first (an unpinned `npx skills` ran skills 1.5.18 on Node 20,
// which lacks what the feed needs).
const (
	CLINode           = "node@22"
	SkillsCLIPackage  = "skills@1.7.4"
	ClawhubCLIPackage = "clawhub@0.23.3"
)

// skillsCLIPin runs the skills CLI as the README does.
const skillsCLIPin = "npx -y -p " + CLINode + " -p " + SkillsCLIPackage + " -- skills"

// clawhubCLIPin runs the clawhub CLI.
const clawhubCLIPin = "npx -y -p " + CLINode + " -p " + ClawhubCLIPackage + " -- clawhub"

// client is one tab of the chooser.
type client struct {
	ID, Name string // ID is the radio's and the panel's id suffix
	Lines    []installLine
	Note     string
	// Live marks a client that needs a running server (its tab is
	// data-live: an export's page lacks it).
	Live bool
}

// skillsCLI is the skills CLI's line that installs from the feed at u.
func (p *Renderer) skillsCLI(u string) string {
	line := skillsCLIPin + " add " + u
	if p.opts.Private {
		// The CLI reports the URLs it installs from to its vendor
		// unless told not to; a private feed's carry its token.
		line = "DISABLE_TELEMETRY=1 " + line
	}
	return line
}

// curl is the curl line that saves u as file.
func curl(file, u string) string {
	return "curl -fL -o " + file + " '" + u + "'"
}

// netclaw is the feed entry for netclaw's settings (SkillFeeds.Feeds):
// the server's base URL, never a path token (netclaw reads the sub-agent
// tree at the host's root), with the token as the feed's key.
func (p *Renderer) netclaw(f *feed.Feed, base string) installLine {
	name := orDefault(f.Server().Name, "skillserver")
	key := ""
	switch {
	case strings.HasPrefix(f.Prefix(), feed.PathTokenPrefix):
		key = `, "ApiKey": "` + strings.TrimPrefix(f.Prefix(), feed.PathTokenPrefix) + `"`
	case p.opts.Private:
		key = `, "ApiKey": "<your read token>"`
	}
	return installLine{Label: "Every skill and sub-agent of this feed, in netclaw's settings",
		Line: "{\n  \"SkillFeeds\": {\n    \"Feeds\": [\n      { \"Name\": \"" + name + "\", \"Url\": \"" + base + "\"" + key + " }\n    ]\n  }\n}"}
}

// skillClients are the chooser's tabs of skill version v, whose feed is
// at feedURL (base and the view's prefix). An export leaves out the
// clients that need a running server (ClawHub's API, MCP).
func (p *Renderer) skillClients(f *feed.Feed, base, feedURL string, v *item.SkillVersion) []client {
	out := []client{{ID: "skills", Name: "skills CLI", Lines: []installLine{
		{Label: "This skill (its one-skill feed)", Line: p.skillsCLI(feedURL + feed.ScopedFeedHref(v.Name))},
		{Label: "Every skill of this feed", Line: p.skillsCLI(feedURL)},
	}, Note: "Installs the latest version. Type the URL as shown: the SOURCE@NAME line of skills find does not paste into skills add." + execNote(v)},
		{ID: "netclaw", Name: "netclaw", Lines: []installLine{p.netclaw(f, base)}}}
	if !f.IsStatic() {
		out = append(out,
			client{ID: "clawhub", Name: "clawhub", Live: true, Lines: []installLine{{Label: "This skill, with the clawhub CLI",
				Line: clawhubCLIPin + " --site " + feedURL + " --workdir . --no-input install " + v.Name}}},
			client{ID: "mcp", Name: "MCP", Live: true, Lines: []installLine{{Label: "The MCP server (streamable HTTP) of this feed's skills", Line: feedURL + feed.PathMCP}}})
	}
	var dl installLine
	if v.Type == item.TypeArchive {
		dl = installLine{Label: "The archive of " + v.Version, Line: curl(v.Name+"-"+v.Version+".zip", feed.ArtifactURL(feedURL, v))}
	} else {
		dl = installLine{Label: "The " + skill.FileName + " of " + v.Version, Line: curl(skill.FileName, feed.ArtifactURL(feedURL, v))}
	}
	return append(out, client{ID: "curl", Name: "curl", Lines: []installLine{dl}})
}

// execNote tells what to type after the skills CLI installed v's
// executable files: it writes every file without its execute bit.
func execNote(v *item.SkillVersion) string {
	var exec []string
	for _, r := range v.Resources {
		if r.Mode&0o111 != 0 {
			exec = append(exec, shellWord(r.Path))
		}
	}
	if len(exec) == 0 {
		return ""
	}
	return " The CLI drops execute bits: in the installed folder (.agents/skills/" + v.Name + " with -a universal) run chmod +x " + strings.Join(exec, " ") + "."
}

// shellWord quotes p for a POSIX shell unless it needs none.
func shellWord(p string) string {
	if strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// agentClients are the chooser's tabs of sub-agent version v.
func (p *Renderer) agentClients(f *feed.Feed, base, feedURL string, v *item.AgentVersion) []client {
	return []client{
		{ID: "netclaw", Name: "netclaw", Lines: []installLine{p.netclaw(f, base)}},
		{ID: "curl", Name: "curl", Lines: []installLine{{Label: "The " + feed.AgentFile + " of " + v.Version, Line: curl(v.Name+".md", feed.AgentURL(feedURL, v))}}},
	}
}
