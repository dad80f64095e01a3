package throttle

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestBurstThenRate: a key may fail perMinute times at once, then once
// each 60/perMinute seconds; Retry-After says when; failures while held
// back do not hold it back longer; keys are counted apart.
func TestBurstThenRate(t *testing.T) {
	l := New(6, MaxKeys) // one failure every 10s
	for i := range 6 {
		if _, ok := l.Fail("a", t0); !ok {
			t.Fatalf("failure %d of the burst refused", i+1)
		}
	}
	after, ok := l.Fail("a", t0)
	if ok || after != 10*time.Second {
		t.Fatalf("7th failure at once: %v, %v; want refused, 10s", after, ok)
	}
	for range 100 {
		l.Fail("a", t0.Add(4*time.Second)) // held back: not counted
	}
	if after, ok := l.Fail("a", t0.Add(4*time.Second)); ok || after != 6*time.Second {
		t.Fatalf("4s later: %v, %v; want refused, 6s", after, ok)
	}
	if _, ok := l.Fail("a", t0.Add(10*time.Second)); !ok {
		t.Fatal("10s later: refused")
	}
	if _, ok := l.Fail("a", t0.Add(10*time.Second)); ok {
		t.Fatal("a second failure 10s later: allowed")
	}
	if _, ok := l.Fail("b", t0); !ok {
		t.Fatal("another key was held back")
	}
	// A quiet key gets its whole burst back, and no more.
	for i := range 7 {
		if _, ok := l.Fail("a", t0.Add(time.Hour)); ok != (i < 6) {
			t.Fatalf("an hour later, failure %d: allowed %v", i+1, ok)
		}
	}
}

// TestKeysAreBounded: past maxKeys, the key that failed least recently
// is forgotten.
func TestKeysAreBounded(t *testing.T) {
	l := New(1, 3)
	for _, k := range []string{"a", "b", "c"} {
		l.Fail(k, t0)
	}
	l.Fail("a", t0) // a fails again: b is now the least recent
	l.Fail("d", t0)
	if l.Len() != 3 {
		t.Fatalf("%d keys remembered, want 3", l.Len())
	}
	if _, ok := l.Fail("a", t0); ok {
		t.Error("a, failing recently, was forgotten")
	}
	if _, ok := l.Fail("b", t0); !ok {
		t.Error("b, the least recent, was not forgotten")
	}
}

// TestTableSize: MaxKeys keys, as a flood of addresses leaves them,
// hold under the bound the documentation gives.
func TestTableSize(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l := New(60, MaxKeys)
	for i := range 3 * MaxKeys {
		l.Fail(fmt.Sprintf("2001:db8:%x:%x::", i>>16, i&0xffff), t0)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if l.Len() != MaxKeys {
		t.Fatalf("%d keys, want %d", l.Len(), MaxKeys)
	}
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 2<<20 {
		t.Errorf("the table of %d keys holds %d bytes, over 2 MiB", MaxKeys, grown)
	} else {
		t.Logf("the table of %d keys holds about %d bytes", MaxKeys, grown)
	}
	runtime.KeepAlive(l)
}

func TestNilLimitsNothing(t *testing.T) {
	l := New(0, MaxKeys)
	for range 1000 {
		if _, ok := l.Fail("a", t0); !ok {
			t.Fatal("a nil Limiter refused")
		}
	}
}

// TestHeldRecordsNothing: Held says whether a key's allowance is spent,
// and for how long, without spending it or remembering a new key.
func TestHeldRecordsNothing(t *testing.T) {
	l := New(6, MaxKeys)
	for range 100 {
		if _, held := l.Held("a", t0); held {
			t.Fatal("a key that never failed is held")
		}
	}
	if l.Len() != 0 {
		t.Fatalf("Held remembered %d keys", l.Len())
	}
	for range 6 {
		l.Fail("a", t0)
	}
	if after, held := l.Held("a", t0); !held || after != 10*time.Second {
		t.Fatalf("after the burst: %v, %v; want held, 10s", after, held)
	}
	if after, held := l.Held("a", t0.Add(4*time.Second)); !held || after != 6*time.Second {
		t.Fatalf("4s later: %v, %v; want held, 6s", after, held)
	}
	if _, held := l.Held("a", t0.Add(10*time.Second)); held {
		t.Fatal("10s later: still held")
	}
	if _, ok := l.Fail("a", t0.Add(10*time.Second)); !ok {
		t.Fatal("Held spent the allowance it reported")
	}
	var nilL *Limiter
	if _, held := nilL.Held("a", t0); held {
		t.Fatal("a nil Limiter holds back")
	}
}
