package catalog

import (
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/scan"
	"github.com/skillserver/skillserver/internal/skill"
)

// Retention keeps the promise of pinned URLs across reloads: an artifact
// URL advertised by any snapshot published within the window keeps serving
// exactly its bytes, then 404. It also keeps a few recently retired
// snapshots so that a client walking the native tree across a reload can
// finish the walk it started.
//
// What it holds beyond the published snapshot is bounded in bytes: the
// retained blobs, the blobs retired snapshots hold that the published one
// does not, and the documents those snapshots rendered, each counted once.
// Beyond the bound the oldest go first, a retired snapshot before the
// blobs retired with it (its documents point at them). Everything is
// dropped when its window ends, on a timer, not at the next reload.
type retention struct {
	window       time.Duration
	maxBytes     int64
	maxSnapshots int
	now          func() time.Time
	// expired, if set, is called when the timer has expired something,
	// without mu held.
	expired func()

	mu      sync.Mutex
	byKey   map[ArtifactKey][]retainedRef // artifact key -> digests it served
	blobs   map[content.Digest]*retainedBlob
	current *content.Store // the published snapshot's store
	// bytes is what retention alone keeps in memory (see above).
	bytes     int64
	evicted   int64             // blobs dropped early for the byte bound, ever
	dropped   int64             // retired snapshots dropped early for the byte bound, ever
	snapshots []retiredSnapshot // newest first
	timer     *time.Timer       // runs expire when the next item's window ends
}

type retainedRef struct {
	digest  content.Digest
	expires time.Time
}

type retainedBlob struct {
	blob    content.Blob
	expires time.Time
	// files are the items and file names the bytes were published under,
	// for their content-addressed URLs (feed.ArtifactPath), each true when
	// a download of it installed the item.
	files map[retainedFile]bool
}

// retainedFile is one item's file name a retained blob was published as.
type retainedFile struct {
	agent      bool
	item, name string
}

// fileOf is the name key's bytes are published as in their
// content-addressed URL.
func fileOf(key ArtifactKey) retainedFile {
	if key.Agent {
		return retainedFile{agent: true, item: key.Name, name: feed.AgentFile}
	}
	return retainedFile{item: key.Name, name: key.File}
}

type retiredSnapshot struct {
	snap    *Snapshot
	expires time.Time
	// own holds the sizes of the blobs snap's store held that the
	// snapshot replacing it did not: what keeping snap keeps alive.
	own map[content.Digest]int64
}

// RetentionStats describe what retention holds.
type RetentionStats struct {
	Artifacts int   // pinned artifacts retained
	Bytes     int64 // bytes held only for retention (not also by the published snapshot)
	Evicted   int64 // blobs dropped before their window ended, to stay under the byte bound
	Snapshots int
	// SnapshotsDropped counts retired snapshots dropped before their
	// window ended, to stay under the byte bound.
	SnapshotsDropped int64
}

func newRetention(window time.Duration, maxBytes int64, now func() time.Time) *retention {
	return &retention{window: window, maxBytes: maxBytes, maxSnapshots: 8, now: now,
		byKey: map[ArtifactKey][]retainedRef{}, blobs: map[content.Digest]*retainedBlob{}}
}

// retire records what old advertised that cur no longer serves.
func (r *retention) retire(old, cur *Snapshot, now time.Time) {
	if old == nil {
		return
	}
	if r.window <= 0 {
		old.release()
		return
	}
	expires := now.Add(r.window)
	r.mu.Lock()
	defer r.mu.Unlock()
	old.changedArtifacts(cur, func(key ArtifactKey, d content.Digest, install bool) {
		data, ok := old.Store.Blob(d)
		if !ok {
			return
		}
		r.byKey[key] = append(r.byKey[key], retainedRef{digest: d, expires: expires})
		b, ok := r.blobs[d]
		if ok {
			b.expires = expires
		} else {
			b = &retainedBlob{blob: data, expires: expires, files: map[retainedFile]bool{}}
			r.blobs[d] = b
		}
		f := fileOf(key)
		b.files[f] = b.files[f] || install
	})
	own := map[content.Digest]int64{}
	old.Store.EachMissing(cur.Store, func(d content.Digest, n int64) { own[d] = n })
	r.current = cur.Store
	r.snapshots = append([]retiredSnapshot{{snap: old, expires: expires, own: own}}, r.snapshots...)
	for len(r.snapshots) > r.maxSnapshots {
		r.dropSnapshot(len(r.snapshots) - 1)
	}
	r.expire(now)
}

// release drops what the shared document cache holds for s, which
// nothing serves any more.
func (s *Snapshot) release() { s.feed.Release() }

func (r *retention) dropSnapshot(i int) {
	r.snapshots[i].snap.release()
	r.snapshots = slices.Delete(r.snapshots, i, i+1)
}

// expire drops what the window no longer covers, then the oldest items
// while retention alone holds more than the byte bound, and sets the
// timer for the next window to end. A blob the published snapshot also
// holds is kept and not counted: its bytes are the same slice, so it
// costs nothing until a later snapshot drops it, and then it counts.
func (r *retention) expire(now time.Time) {
	for d, b := range r.blobs {
		if !now.Before(b.expires) {
			delete(r.blobs, d)
		}
	}
	for i := len(r.snapshots) - 1; i >= 0; i-- {
		if !now.Before(r.snapshots[i].expires) {
			r.dropSnapshot(i)
		}
	}
	r.bound()
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
	r.schedule(now)
}

// bound counts what retention alone holds and, while it is over the byte
// bound, drops the oldest: retired snapshots (oldest last in the list)
// and blobs, in the order their windows end; at a tie the snapshot goes
// first.
func (r *retention) bound() {
	held := func(d content.Digest) bool { return r.current != nil && r.current.Has(d) }
	holders := map[content.Digest]int{}     // retired snapshots holding a blob alone
	docs := make([]int64, len(r.snapshots)) // their documents, read once: they grow
	r.bytes = 0
	for d, b := range r.blobs {
		if !held(d) {
			r.bytes += b.blob.Size()
		}
	}
	for i, rs := range r.snapshots {
		docs[i] = rs.snap.feed.Bytes()
		r.bytes += docs[i]
		for d, n := range rs.own {
			if held(d) {
				continue
			}
			if holders[d] == 0 && r.blobs[d] == nil {
				r.bytes += n
			}
			holders[d]++
		}
	}
	if r.maxBytes <= 0 || r.bytes <= r.maxBytes {
		return
	}
	type aged struct {
		d content.Digest
		b *retainedBlob
	}
	var own []aged // blobs only retention holds, oldest first
	for d, b := range r.blobs {
		if !held(d) {
			own = append(own, aged{d, b})
		}
	}
	slices.SortFunc(own, func(x, y aged) int {
		if c := x.b.expires.Compare(y.b.expires); c != 0 {
			return c
		}
		return strings.Compare(string(x.d), string(y.d))
	})
	for r.bytes > r.maxBytes {
		if n := len(r.snapshots); n > 0 && (len(own) == 0 || !r.snapshots[n-1].expires.After(own[0].b.expires)) {
			rs := r.snapshots[n-1]
			r.bytes -= docs[n-1]
			docs = docs[:n-1]
			for d, size := range rs.own {
				if held(d) {
					continue
				}
				if holders[d]--; holders[d] == 0 && r.blobs[d] == nil {
					r.bytes -= size
				}
			}
			r.dropSnapshot(n - 1)
			r.dropped++
			continue
		}
		if len(own) == 0 {
			return // only documents of no snapshot: nothing left to drop
		}
		a := own[0]
		own = own[1:]
		delete(r.blobs, a.d)
		if holders[a.d] == 0 {
			r.bytes -= a.b.blob.Size()
		}
		r.evicted++
	}
}

// schedule sets the timer to expire what is held when the first window
// ends; with nothing held, no timer runs.
func (r *retention) schedule(now time.Time) {
	var next time.Time
	for _, b := range r.blobs {
		if next.IsZero() || b.expires.Before(next) {
			next = b.expires
		}
	}
	if n := len(r.snapshots); n > 0 && (next.IsZero() || r.snapshots[n-1].expires.Before(next)) {
		next = r.snapshots[n-1].expires
	}
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	if next.IsZero() {
		return
	}
	r.timer = time.AfterFunc(next.Sub(now), func() {
		r.mu.Lock()
		r.expire(r.now())
		r.mu.Unlock()
		if r.expired != nil {
			r.expired()
		}
	})
}

// artifact returns the bytes with digest d that key served within the
// window, if retained.
func (r *retention) artifact(key ArtifactKey, d content.Digest, now time.Time) (content.Blob, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ref := range r.byKey[key] {
		if ref.digest != d || !now.Before(ref.expires) {
			continue
		}
		if b, ok := r.blobs[d]; ok {
			return b.blob, true
		}
	}
	return content.Blob{}, false
}

// blob returns retained bytes by digest.
func (r *retention) blob(d content.Digest, now time.Time) (content.Blob, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b, ok := r.blobs[d]; ok && now.Before(b.expires) {
		return b.blob, true
	}
	return content.Blob{}, false
}

// file returns retained bytes d if an item allow lets through published
// them under name (a skill's SKILL.md, archive.zip or resource path, or
// agent.md), and the item a download of them installed ("" for a file
// that installs nothing, such as an archive version's SKILL.md); allow
// nil lets every item through.
func (r *retention) file(d content.Digest, name string, allow func(item string) bool, now time.Time) (content.Blob, string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.blobs[d]
	if !ok || !now.Before(b.expires) {
		return content.Blob{}, "", false
	}
	for f, installs := range b.files {
		if f.name == name && (allow == nil || allow(f.item)) {
			install := ""
			if installs {
				install = f.item
			}
			return b.blob, install, true
		}
	}
	return content.Blob{}, "", false
}

// holds reports whether what retention keeps names the blob d: a
// retained blob, or a blob of a retired snapshot it keeps. Blobs it
// names stay in the state directory (Catalog.sweep).
func (r *retention) holds(d content.Digest) bool {
	if _, ok := r.blobs[d]; ok {
		return true
	}
	for _, rs := range r.snapshots {
		if rs.snap.Store.Has(d) {
			return true
		}
	}
	return false
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
	return RetentionStats{Artifacts: n, Bytes: r.bytes, Evicted: r.evicted, Snapshots: len(r.snapshots), SnapshotsDropped: r.dropped}
}

// ArtifactKey names what a pinned URL points at, independent of its URL
// and its encoding: one file of one version.
type ArtifactKey struct {
	Agent         bool // a sub-agent's agent-md file; else a file of a skill version
	Name, Version string
	File          string // of a skill version: SKILL.md, archive.zip or a resource path
}

// changedArtifacts calls fn with every artifact key s serves that cur
// does not serve with the same digest, and whether a download of it
// installs its item (as feed.ArtifactFile's Install says). Entries cur
// reused from s are skipped whole, so the cost follows the size of the
// change.
func (s *Snapshot) changedArtifacts(cur *Snapshot, fn func(key ArtifactKey, d content.Digest, install bool)) {
	skillNames, agentNames := maps.Keys(s.skillEntries), maps.Keys(s.agentEntries)
	if cur.partial {
		// Only the rescanned entries can differ.
		skillNames, agentNames = slices.Values(cur.rescannedSkills), slices.Values(cur.rescannedAgents)
	}
	changedIn(s.skillEntries, cur.skillEntries, skillNames, skillFiles, fn)
	changedIn(s.agentEntries, cur.agentEntries, agentNames, agentFiles, fn)
}

// changedIn calls fn with every artifact of the entries names of old that
// cur does not serve with the same digest; files lists a version's.
func changedIn[V item.Version](old, cur map[string]*scan.Entry[V], names iter.Seq[string], files func(V) []artifact, fn func(ArtifactKey, content.Digest, bool)) {
	for name := range names {
		e := old[name]
		if e == nil || e.Item == nil || cur[name] == e {
			continue
		}
		now := cur[name].Published()
		for _, v := range e.Item.Versions {
			was := files(v)
			var served map[ArtifactKey]content.Digest // what cur serves of this version
			if now != nil {
				if cv, ok := now.Version(v.Info().Version); ok {
					if cv == v {
						continue
					}
					is := files(cv)
					if slices.Equal(is, was) {
						continue // built again alike, as a full rescan does
					}
					served = make(map[ArtifactKey]content.Digest, len(is))
					for _, a := range is {
						served[a.key] = a.digest
					}
				}
			}
			for _, a := range was {
				if d, ok := served[a.key]; !ok || d != a.digest {
					fn(a.key, a.digest, a.install)
				}
			}
		}
	}
}

// artifact is one file a version serves at a pinned URL.
type artifact struct {
	key     ArtifactKey
	digest  content.Digest
	install bool // a download of it installs the version: its archive, or a lone SKILL.md
}

// skillFiles are a skill version's SKILL.md, archive and resources.
func skillFiles(v *item.SkillVersion) []artifact {
	file := func(name string, d content.Digest, install bool) artifact {
		return artifact{ArtifactKey{Name: v.Name, Version: v.Version, File: name}, d, install}
	}
	archived := v.Type == item.TypeArchive
	out := []artifact{file(skill.FileName, v.SkillMD, !archived)}
	if archived {
		out = append(out, file(feed.ArchiveFile, v.Archive, true))
	}
	for _, r := range v.Resources {
		out = append(out, file(r.Path, r.Digest, false))
	}
	return out
}

// agentFiles is a sub-agent version's agent-md file.
func agentFiles(v *item.AgentVersion) []artifact {
	return []artifact{{ArtifactKey{Agent: true, Name: v.Name, Version: v.Version}, v.Digest, false}}
}
