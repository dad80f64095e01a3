package catalog

import (
	"slices"

	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/provenance"
)

// publishesSameAs reports whether s publishes what o does, so publishing
// s instead of o would change no byte a client can read (Catalog.Verify).
// Every published byte is a function of what it compares:
//
//   - the fingerprint: each version's kind, name, version and artifact
//     digest, and so every byte of its files and its front matter (the
//     metadata, the description, the sub-agent it routes to), its
//     resources' paths and modes (they are in the archive);
//   - each version's published time and whether it was declared: the
//     one thing a version's documents take from outside its bytes (the
//     files' modification times);
//   - the problems, valid or not, with their paths and messages: what
//     /-/problems, the metrics and the catalogue pages report;
//   - where the roots were read from (the checkout's commit and time);
//   - whether a sub-agent source is configured.
func (s *Snapshot) publishesSameAs(o *Snapshot) bool {
	return o != nil && s.derived.fingerprint == o.derived.fingerprint &&
		s.AgentsConfigured == o.AgentsConfigured &&
		slices.Equal(s.Problems, o.Problems) &&
		sameCheckout(s.Provenance, o.Provenance) && sameCheckout(s.AgentsProvenance, o.AgentsProvenance) &&
		samePublished(s.Skills, o.Skills) && samePublished(s.Agents, o.Agents)
}

func sameCheckout(a, b *provenance.Source) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Repository == b.Repository && a.Commit == b.Commit && a.Path == b.Path && a.Time.Equal(b.Time)
}

// samePublished reports whether a and b hold the same items with the same
// versions, each published at the same time.
func samePublished[V item.Version](a, b []*item.Item[V]) bool {
	return slices.EqualFunc(a, b, func(x, y *item.Item[V]) bool {
		return x.Name == y.Name && slices.EqualFunc(x.Versions, y.Versions, func(v, w V) bool {
			vi, wi := v.Info(), w.Info()
			return vi.Version == wi.Version && vi.PublishedAt.Equal(wi.PublishedAt) && vi.PublishedDeclared == wi.PublishedDeclared
		})
	})
}
