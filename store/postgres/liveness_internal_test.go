package postgres

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
)

// The liveness decisions, on readings given by the test: a ping confirms
// Bound from its sending; one that answers after liveness lapsed ends the
// generation; fences hold only within the confirmation and generation;
// another owner is taken over only TakeoverDelay after its lock was found
// free, and probed at most once per Keepalive.
func TestLivenessDecisions(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	newL := func() *liveness {
		l := &liveness{opts: LivenessOptions{Keepalive: 100 * time.Millisecond, Bound: time.Second, TakeoverDelay: 2 * time.Second}.withDefaults()}
		l.gen, l.owner, l.validUntil = 3, "me/3-0000beef", at(time.Second)
		return l
	}
	cur := store.Fence{Owner: "me/3-0000beef", Gen: 3}

	t.Run("confirm", func(t *testing.T) {
		for _, tc := range []struct {
			name      string
			gen       uint64
			sent, now time.Duration
			want      bool
			until     time.Duration
		}{
			{"in time", 3, 500 * time.Millisecond, 700 * time.Millisecond, true, 1500 * time.Millisecond},
			{"older ping than the last", 3, -500 * time.Millisecond, 700 * time.Millisecond, true, time.Second},
			{"answered after the lapse", 3, 500 * time.Millisecond, time.Second, false, time.Second},
			{"old generation", 2, 500 * time.Millisecond, 700 * time.Millisecond, false, time.Second},
		} {
			l := newL()
			if got := l.confirm(tc.gen, at(tc.sent), at(tc.now)); got != tc.want || !l.validUntil.Equal(at(tc.until)) {
				t.Errorf("%s: confirm = %v, valid until +%s; want %v, +%s", tc.name, got, l.validUntil.Sub(t0), tc.want, tc.until)
			}
		}
	})

	t.Run("fence and holds", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			f     store.Fence
			now   time.Duration
			holds bool
		}{
			{"current, confirmed", cur, 999 * time.Millisecond, true},
			{"current, lapsed", cur, time.Second, false},
			{"earlier generation", store.Fence{Owner: "me/2-0000cafe", Gen: 2}, 0, false},
		} {
			l := newL()
			if got := l.holds(tc.f, at(tc.now)); got != tc.holds {
				t.Errorf("%s: holds = %v, want %v", tc.name, got, tc.holds)
			}
		}
		l := newL()
		if f, err := l.fence(at(0)); err != nil || f != cur {
			t.Errorf("fence while confirmed = %+v, %v; want %+v", f, err, cur)
		}
		if _, err := l.fence(at(time.Second)); err == nil {
			t.Error("fence after the lapse answered no error")
		}
	})

	t.Run("take over", func(t *testing.T) {
		l := newL()
		steps := []struct {
			what              string
			now               time.Duration
			probe             *bool // record a probe's result first
			takeOver, tryLock bool
		}{
			{what: "never probed", now: 0, tryLock: true},
			{what: "another waiter meanwhile: one probe at a time", now: 50 * time.Millisecond},
			{what: "held", now: 0, probe: ptr(false)},
			{what: "probed just now", now: 99 * time.Millisecond},
			{what: "a keepalive later", now: 100 * time.Millisecond, tryLock: true},
			{what: "found free", now: 100 * time.Millisecond, probe: ptr(true)},
			{what: "delay not over", now: 2099 * time.Millisecond},
			{what: "delay over", now: 2100 * time.Millisecond, takeOver: true},
			{what: "free again later: the first finding counts", now: 2200 * time.Millisecond, probe: ptr(true), takeOver: true},
		}
		for _, s := range steps {
			if s.probe != nil {
				l.record("other/1-0a1b2c3d", *s.probe, at(s.now))
			}
			if take, try := l.decide("other/1-0a1b2c3d", at(s.now)); take != s.takeOver || try != s.tryLock {
				t.Errorf("%s: decide = %v, %v; want %v, %v", s.what, take, try, s.takeOver, s.tryLock)
			}
		}
		for _, owner := range []string{"me/3-0000beef", "host-42-0a1b2c3d", "", "other/1-z"} {
			if take, try := l.decide(owner, at(time.Hour)); take || try {
				t.Errorf("owner id %q (the current one, or one that holds no liveness lock) is probed or taken over", owner)
			}
		}
	})
}

func ptr[T any](v T) *T { return &v }
