package catalog

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillserver/skillserver/internal/content"
)

// Retention keeps the promise of pinned URLs across reloads: an artifact
// URL advertised by any snapshot published within the window keeps serving
// exactly its bytes, then 404. It holds only what the current snapshot no
// longer serves at the same path, bounded in bytes; the oldest goes first
// when the bound is reached.
//
// It also keeps a few recently retired snapshots so that a client walking
// the native tree across a reload can finish the walk it started.
type retention struct {
	window       time.Duration
	maxBytes     int64
	maxSnapshots int

	mu      sync.Mutex
	byKey   map[string][]retainedRef // artifact key -> digests it served
	blobs   map[content.Digest]*retainedBlob
	current *content.Store // the published snapshot's store
	// bytes is the sum of the sizes of the blobs the published snapshot
	// does not also hold: what retention alone keeps in memory.
	bytes     int64
	evicted   int64             // blobs dropped early for the byte bound, ever
	snapshots []retiredSnapshot // newest first
}

type retainedRef struct {
	digest  content.Digest
	expires time.Time
}

type retainedBlob struct {
	data    []byte
	expires time.Time
}

type retiredSnapshot struct {
	snap    *Snapshot
	expires time.Time
}

// RetentionStats describe what retention holds.
type RetentionStats struct {
	Artifacts int   // pinned artifacts retained
	Bytes     int64 // bytes held only for retention (not also by the published snapshot)
	Evicted   int64 // blobs dropped before their window ended, to stay under the byte bound
	Snapshots int
}

func newRetention(window time.Duration, maxBytes int64) *retention {
	return &retention{window: window, maxBytes: maxBytes, maxSnapshots: 8,
		byKey: map[string][]retainedRef{}, blobs: map[content.Digest]*retainedBlob{}}
}

// retire records what old advertised that cur no longer serves.
func (r *retention) retire(old, cur *Snapshot, now time.Time) {
	if r.window <= 0 || old == nil {
		return
	}
	expires := now.Add(r.window)
	r.mu.Lock()
	defer r.mu.Unlock()
	old.changedArtifacts(cur, func(key string, d content.Digest) {
		data, ok := old.Store.Get(d)
		if !ok {
			return
		}
		r.byKey[key] = append(r.byKey[key], retainedRef{digest: d, expires: expires})
		if b, ok := r.blobs[d]; ok {
			b.expires = expires
		} else {
			r.blobs[d] = &retainedBlob{data: data, expires: expires}
		}
	})
	r.current = cur.Store
	r.snapshots = append([]retiredSnapshot{{snap: old, expires: expires}}, r.snapshots...)
	if len(r.snapshots) > r.maxSnapshots {
		r.snapshots = r.snapshots[:r.maxSnapshots]
	}
	r.expire(now)
}

// expire drops what the window no longer covers, and the oldest blobs
// while retention alone holds more than the byte bound. A blob the
// published snapshot also holds is kept and not counted: its bytes are
// the same slice, so it costs nothing until a later snapshot drops it,
// and then it counts.
func (r *retention) expire(now time.Time) {
	type aged struct {
		d content.Digest
		b *retainedBlob
	}
	var own []aged // blobs only retention holds
	r.bytes = 0
	for d, b := range r.blobs {
		switch {
		case !now.Before(b.expires):
			delete(r.blobs, d)
		case r.current != nil && r.current.Has(d):
		default:
			own = append(own, aged{d, b})
			r.bytes += int64(len(b.data))
		}
	}
	if r.maxBytes > 0 && r.bytes > r.maxBytes {
		slices.SortFunc(own, func(x, y aged) int {
			if c := x.b.expires.Compare(y.b.expires); c != 0 {
				return c
			}
			return strings.Compare(string(x.d), string(y.d))
		})
		for _, a := range own {
			if r.bytes <= r.maxBytes {
				break
			}
			delete(r.blobs, a.d)
			r.bytes -= int64(len(a.b.data))
			r.evicted++
		}
	}
	for key, refs := range r.byKey {
		refs = slices.DeleteFunc(refs, func(ref retainedRef) bool {
			_, ok := r.blobs[ref.digest]
			return !now.Before(ref.expires) || !ok
		})
		if len(refs) == 0 {
			delete(r.byKey, key)
		} else {
			r.byKey[key] = refs
		}
	}
	r.snapshots = slices.DeleteFunc(r.snapshots, func(rs retiredSnapshot) bool { return !now.Before(rs.expires) })
}

// artifact returns the bytes with digest d that key served within the
// window, if retained.
func (r *retention) artifact(key string, d content.Digest, now time.Time) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ref := range r.byKey[key] {
		if ref.digest != d || !now.Before(ref.expires) {
			continue
		}
		if b, ok := r.blobs[d]; ok {
			return b.data, true
		}
	}
	return nil, false
}

// blob returns retained bytes by digest.
func (r *retention) blob(d content.Digest, now time.Time) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b, ok := r.blobs[d]; ok && now.Before(b.expires) {
		return b.data, true
	}
	return nil, false
}

// retired returns the retired snapshots still within the window, newest
// first.
func (r *retention) retired(now time.Time) []*Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*Snapshot
	for _, rs := range r.snapshots {
		if now.Before(rs.expires) {
			out = append(out, rs.snap)
		}
	}
	return out
}

func (r *retention) stats() RetentionStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, refs := range r.byKey {
		n += len(refs)
	}
	return RetentionStats{Artifacts: n, Bytes: r.bytes, Evicted: r.evicted, Snapshots: len(r.snapshots)}
}

// Artifact keys name what a pinned URL points at, independent of URL
// encoding: the decoded /api/v1 path.

// SkillFileKey is the key of one file of a skill version: "SKILL.md",
// "archive.zip" or a resource path.
func SkillFileKey(name, version, file string) string {
	return "/api/v1/skills/" + name + "/" + version + "/" + file
}

// AgentFileKey is the key of an agent-md file.
func AgentFileKey(name, version string) string {
	return "/api/v1/subagents/" + name + "/" + version + "/agent.md"
}

// changedArtifacts calls fn with every artifact key s serves that cur
// does not serve with the same digest. Entries cur reused from s are
// skipped whole, so the cost follows the size of the change.
func (s *Snapshot) changedArtifacts(cur *Snapshot, fn func(key string, d content.Digest)) {
	skillNames, agentNames := maps.Keys(s.skillEntries), maps.Keys(s.agentEntries)
	if cur.partial {
		// Only the rescanned entries can differ.
		skillNames, agentNames = slices.Values(cur.rescannedSkills), slices.Values(cur.rescannedAgents)
	}
	for name := range skillNames {
		e := s.skillEntries[name]
		if e == nil || e.skill == nil || cur.skillEntries[name] == e {
			continue
		}
		curSkill, _ := cur.Skill(name)
		for _, v := range e.skill.Versions {
			var cv *SkillVersion
			if curSkill != nil {
				cv, _ = curSkill.Version(v.Version)
			}
			if cv == v {
				continue
			}
			same := func(file string, d content.Digest) bool {
				if cv == nil {
					return false
				}
				switch file {
				case skillFile:
					return cv.SkillMD == d
				case "archive.zip":
					return cv.Type == TypeArchive && cv.Archive == d
				}
				r, ok := cv.Resource(file)
				return ok && r.Digest == d
			}
			emit := func(file string, d content.Digest) {
				if !same(file, d) {
					fn(SkillFileKey(v.Name, v.Version, file), d)
				}
			}
			emit(skillFile, v.SkillMD)
			if v.Type == TypeArchive {
				emit("archive.zip", v.Archive)
			}
			for _, res := range v.Resources {
				emit(res.Path, res.Digest)
			}
		}
	}
	for name := range agentNames {
		e := s.agentEntries[name]
		if e == nil || e.agent == nil || cur.agentEntries[name] == e {
			continue
		}
		curAgent, _ := cur.Agent(name)
		for _, v := range e.agent.Versions {
			if curAgent != nil {
				if cv, ok := curAgent.Version(v.Version); ok && cv.Digest == v.Digest {
					continue
				}
			}
			fn(AgentFileKey(v.Name, v.Version), v.Digest)
		}
	}
}
