package reload

import "time"

// debounce turns a burst of events into one reload request: it fires once
// the tree has been quiet for wait, or maxWait after the burst's first
// event, whichever comes first, so a tree that never goes quiet (a cache
// file rewritten every 100ms) still reloads every maxWait.
type debounce struct {
	wait, maxWait time.Duration
	timer         *time.Timer
	c             <-chan time.Time // the timer's channel while a burst is pending, else nil
	deadline      time.Time        // maxWait after the pending burst's first event
}

// event starts a burst, or moves the pending one's end to wait from now,
// but never past its deadline.
func (d *debounce) event() {
	now := time.Now()
	if d.c == nil {
		d.deadline = now.Add(d.maxWait)
	}
	d.arm(min(d.wait, d.deadline.Sub(now)))
}

// start starts a burst unless one is pending, whose end it leaves alone.
func (d *debounce) start() {
	if d.c == nil {
		d.deadline = time.Now().Add(d.maxWait)
		d.arm(d.wait)
	}
}

func (d *debounce) arm(after time.Duration) {
	if d.timer == nil {
		d.timer = time.NewTimer(after)
	} else {
		d.timer.Reset(after)
	}
	d.c = d.timer.C
}

// fired ends the burst; call it when c has delivered.
func (d *debounce) fired() { d.c = nil }

func (d *debounce) stop() {
	if d.timer != nil {
		d.timer.Stop()
	}
}
