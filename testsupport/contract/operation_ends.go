package contract

import (
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/ports"
)

// endsHeardWithin bounds how long the suite waits for news to arrive: a
// failure bound, not a speed requirement.
const endsHeardWithin = 10 * time.Second

// OperationEnds is the contract of ports.OperationEnds: a listener hears
// Missed once it starts hearing, then every id that sender ended, in
// batches of any size and possibly with spurious ids or repeats. sender
// and receiver share one store (two processes on one database), or are one
// value for an adapter that spans one process only.
func OperationEnds(t *testing.T, sender, receiver ports.OperationEnds) {
	heard := newEndRecorder()
	receiver.Listen(heard)
	heard.awaitMissed(t)

	t.Run("an end reaches the listener", func(t *testing.T) {
		id := uuid.New()
		sender.Ended(id)
		heard.await(t, id)
	})

	t.Run("a burst of ends reaches it whole", func(t *testing.T) {
		ids := make([]uuid.UUID, 1000)
		for i := range ids {
			ids[i] = uuid.New()
		}
		// One call with many ids, and many calls with one, both
		// coalescing as the adapter likes.
		sender.Ended(ids[:500]...)
		for _, id := range ids[500:] {
			sender.Ended(id)
		}
		heard.await(t, ids...)
	})
}

// endRecorder is a listener that keeps what it heard.
type endRecorder struct {
	mu     sync.Mutex
	ids    map[uuid.UUID]bool
	missed int
	change chan struct{}
}

func newEndRecorder() *endRecorder {
	return &endRecorder{ids: map[uuid.UUID]bool{}, change: make(chan struct{}, 1)}
}

func (r *endRecorder) Heard(ids []uuid.UUID) {
	r.mu.Lock()
	for _, id := range ids {
		r.ids[id] = true
	}
	r.mu.Unlock()
	r.changed()
}

func (r *endRecorder) Missed() {
	r.mu.Lock()
	r.missed++
	r.mu.Unlock()
	r.changed()
}

func (r *endRecorder) changed() {
	select {
	case r.change <- struct{}{}:
	default:
	}
}

// until waits for done to hold, checking after every change.
func (r *endRecorder) until(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.After(endsHeardWithin)
	for {
		r.mu.Lock()
		ok := done()
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.change:
		case <-deadline:
			t.Fatalf("%s: not within %s", what, endsHeardWithin)
		}
	}
}

func (r *endRecorder) awaitMissed(t *testing.T) {
	t.Helper()
	r.until(t, "Missed when the listener starts hearing", func() bool { return r.missed > 0 })
}

func (r *endRecorder) await(t *testing.T, ids ...uuid.UUID) {
	t.Helper()
	r.until(t, "every end heard", func() bool {
		for _, id := range ids {
			if !r.ids[id] {
				return false
			}
		}
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		require.True(t, r.ids[id])
	}
}
