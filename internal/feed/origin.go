package feed

import (
	"path"
	"time"

	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/provenance"
)

// provenanceExtensionURI names the agent card's extension that carries
// the skills' source (docs/http-api.md, "Provenance").
const provenanceExtensionURI = "https://github.com/skillserver/skillserver/blob/main/docs/http-api.md#provenance"

// origin says where a version of the root checkout came from: the
// checkout's repository and commit, and the version's folder or file
// relative to the checkout's top. Its published time is the commit's
// when the checkout's commit could be read and the version does not
// declare metadata.published, so replicas of one commit agree; else it is
// the version's own (metadata.published, or the files' modification time).
func origin(checkout *provenance.Source, v *item.VersionInfo) (*provenance.Source, string) {
	published := publishedTime(checkout, v)
	if checkout == nil {
		return nil, published.Format(time.RFC3339)
	}
	src := &provenance.Source{Repository: checkout.Repository, Commit: checkout.Commit, Path: path.Join(checkout.Path, v.Path)}
	return src, published.UTC().Format(time.RFC3339)
}

// publishedTime is v's published time, as origin says.
func publishedTime(checkout *provenance.Source, v *item.VersionInfo) time.Time {
	if checkout != nil && !v.PublishedDeclared && !checkout.Time.IsZero() {
		return checkout.Time
	}
	return v.PublishedAt
}

// SkillPublished and AgentPublished are the published time of a skill's
// or sub-agent's version as every document of the feed gives it: the
// commit's time in a git checkout, unless the version declares
// metadata.published.
func (f *Feed) SkillPublished(v *item.VersionInfo) time.Time {
	return publishedTime(f.origins.Skills, v)
}

// AgentPublished: see SkillPublished.
func (f *Feed) AgentPublished(v *item.VersionInfo) time.Time {
	return publishedTime(f.origins.Agents, v)
}

// SkillSource and AgentSource say where a version came from (its
// repository, commit and folder or file in the checkout), as every
// version document gives it; nil when provenance is off or the root is
// in no checkout.
func (f *Feed) SkillSource(v *item.VersionInfo) *provenance.Source {
	src, _ := origin(f.origins.Skills, v)
	return src
}

// AgentSource: see SkillSource.
func (f *Feed) AgentSource(v *item.VersionInfo) *provenance.Source {
	src, _ := origin(f.origins.Agents, v)
	return src
}
