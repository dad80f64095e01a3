package feed

// FindResults is the answer of PathFind, in the shape the skills CLI's
// `find` command reads: {"skills":[{"name","id","source","installs"}]}.
type FindResults struct {
	Skills []FindHit `json:"skills"`
}

// FindHit is one skill found. The CLI prints source@name and, when a
// result is chosen interactively, runs its own `add SOURCE --skill NAME`,
// so Source is this server's base URL: the feed the CLI installs from.
type FindHit struct {
	Name     string `json:"name"`
	ID       string `json:"id"`
	Source   string `json:"source"`
	Installs uint64 `json:"installs"`
}

// Find turns ranked search hits (SearchSkills) into the CLI's results:
// the first limit of them, in rank order (the CLI re-sorts by installs),
// each with source base and its install count.
func Find(hits []Summary, base string, limit int, installs func(name string) uint64) FindResults {
	hits = hits[:min(limit, len(hits))]
	out := FindResults{Skills: make([]FindHit, len(hits))}
	for i, h := range hits {
		out.Skills[i] = FindHit{Name: h.Name, ID: h.Name, Source: base, Installs: installs(h.Name)}
	}
	return out
}
