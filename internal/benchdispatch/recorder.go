package benchdispatch

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/ports"
)

// recorder holds, for each event of a run, when its transaction committed
// and when the broker first accepted it, and how often it was published.
// Times are monotonic offsets from start; zero means "not yet".
type recorder struct {
	start time.Time
	ids   []uuid.UUID
	index map[uuid.UUID]int // written before the run, only read during it

	commit    []atomic.Int64
	accept    []atomic.Int64
	publishes []atomic.Int32

	committed atomic.Int64 // events committed
	accepted  atomic.Int64 // distinct events accepted
	foreign   atomic.Int64 // accepted ids the run did not produce

	done     chan struct{}
	doneOnce sync.Once
}

func newRecorder(n int) *recorder {
	r := &recorder{
		ids:       make([]uuid.UUID, n),
		index:     make(map[uuid.UUID]int, n),
		commit:    make([]atomic.Int64, n),
		accept:    make([]atomic.Int64, n),
		publishes: make([]atomic.Int32, n),
		done:      make(chan struct{}),
	}
	for i := range r.ids {
		id := uuid.Must(uuid.NewV7()) // as the service makes ids
		r.ids[i] = id
		r.index[id] = i
	}
	r.start = time.Now()
	return r
}

func (r *recorder) now() int64 { return max(1, int64(time.Since(r.start))) }

// committedAt records that events [from, to) committed now.
func (r *recorder) committedAt(from, to int) {
	t := r.now()
	for i := from; i < to; i++ {
		r.commit[i].Store(t)
	}
	r.committed.Add(int64(to - from))
}

// acceptedNow records that the broker accepted msgs now.
func (r *recorder) acceptedNow(msgs []ports.Message) {
	t := r.now()
	for _, m := range msgs {
		i, ok := r.index[m.ID]
		if !ok {
			r.foreign.Add(1)
			continue
		}
		if r.publishes[i].Add(1) == 1 {
			r.accept[i].Store(t)
			if r.accepted.Add(1) == int64(len(r.ids)) {
				r.doneOnce.Do(func() { close(r.done) })
			}
		}
	}
}

// Done is closed once every event was accepted.
func (r *recorder) Done() <-chan struct{} { return r.done }

// recordingPublisher is the real Publisher, noting when the broker accepted
// each event (Publish returned nil: XADD answered, AMQP confirm received).
type recordingPublisher struct {
	next ports.Publisher
	rec  *recorder
}

var _ ports.Publisher = recordingPublisher{}

func (p recordingPublisher) Publish(ctx context.Context, msgs ...ports.Message) error {
	if err := p.next.Publish(ctx, msgs...); err != nil {
		return err
	}
	p.rec.acceptedNow(msgs)
	return nil
}
