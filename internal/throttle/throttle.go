// Package throttle counts failures per key (a client address) and says
// when a key has failed too often: a token bucket per key, bounded in
// the keys it remembers. It knows nothing of HTTP or of what failed.
package throttle

import (
	"container/list"
	"math"
	"sync"
	"time"
)

// MaxKeys is how many keys a Limiter remembers; past it the key that
// failed least recently is forgotten. A key costs under 200 bytes, so
// the table stays under 2 MB whatever clients do (TestTableSize). A key forgotten gets
// a full allowance again: a client that spreads its failures over more
// than MaxKeys addresses gets that many allowances, as it would with
// the table unbounded.
const MaxKeys = 10000

// Limiter allows each key perMinute failures a minute, and perMinute at
// once (a full bucket); a key's allowance refills steadily. A nil
// *Limiter allows everything. It is safe for concurrent use.
type Limiter struct {
	perSecond float64
	burst     float64
	max       int

	mu   sync.Mutex
	keys map[string]*list.Element // of *bucket
	lru  list.List                // most recent failure first
}

type bucket struct {
	key    string
	tokens float64   // failures left at at
	at     time.Time // when tokens was counted
}

// New returns a Limiter of perMinute failures a minute per key,
// remembering at most maxKeys keys; perMinute 0 returns nil, which
// limits nothing.
func New(perMinute, maxKeys int) *Limiter {
	if perMinute <= 0 {
		return nil
	}
	return &Limiter{perSecond: float64(perMinute) / 60, burst: float64(perMinute), max: max(maxKeys, 1),
		keys: map[string]*list.Element{}}
}

// Fail records a failure of key at now, if its allowance has room for
// it, and reports whether it had. When it had not, retryAfter is how
// long until it has room for one more, and the failure is not counted:
// a key is never held back longer for failing while it is held back.
func (l *Limiter) Fail(key string, now time.Time) (retryAfter time.Duration, ok bool) {
	if l == nil {
		return 0, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e, known := l.keys[key]
	if !known {
		if l.lru.Len() >= l.max {
			oldest := l.lru.Back()
			delete(l.keys, oldest.Value.(*bucket).key)
			l.lru.Remove(oldest)
		}
		e = l.lru.PushFront(&bucket{key: key, tokens: l.burst, at: now})
		l.keys[key] = e
	}
	l.lru.MoveToFront(e)
	b := e.Value.(*bucket)
	if wait, held := l.refill(b, now); held {
		return wait, false
	}
	b.tokens--
	return 0, true
}

// Held reports whether key has no failure left in its allowance at now,
// and if so how long until it has one. It records nothing: a caller asks
// before it does what could fail.
func (l *Limiter) Held(key string, now time.Time) (retryAfter time.Duration, held bool) {
	if l == nil {
		return 0, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e, known := l.keys[key]
	if !known {
		return 0, false
	}
	return l.refill(e.Value.(*bucket), now)
}

// refill adds to b what its allowance gained since it was last counted,
// and reports whether it still has no failure left, with the wait until
// it has one.
func (l *Limiter) refill(b *bucket, now time.Time) (wait time.Duration, held bool) {
	if elapsed := now.Sub(b.at); elapsed > 0 {
		b.tokens = min(l.burst, b.tokens+elapsed.Seconds()*l.perSecond)
		b.at = now
	}
	if b.tokens >= 1 {
		return 0, false
	}
	return time.Duration(math.Ceil((1 - b.tokens) / l.perSecond * float64(time.Second))), true
}

// Len is how many keys l remembers.
func (l *Limiter) Len() int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}
