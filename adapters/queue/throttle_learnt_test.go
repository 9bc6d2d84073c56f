package queue

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
)

// toldGate grants every call and keeps the results it is told.
type toldGate struct {
	mu   sync.Mutex
	told []CallResult
}

func (g *toldGate) Try(string) (func(CallResult), Refusal) {
	return func(r CallResult) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.told = append(g.told, r)
	}, Refusal{}
}

func (g *toldGate) results() []CallResult {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]CallResult(nil), g.told...)
}

// askingOutbox parks every job, noting what the gate had been told by
// then.
type askingOutbox struct {
	gate       *toldGate
	toldAtPark [][]CallResult
}

func (o *askingOutbox) Defer(context.Context, ports.Message, time.Time, int, model.JobWait) error {
	o.toldAtPark = append(o.toldAtPark, o.gate.results())
	return nil
}

func (o *askingOutbox) Wake(context.Context, uuid.UUID, model.JobWaitKind, string, time.Duration, time.Duration) (int, error) {
	return 0, nil
}

// A 429 reaches the gate as soon as the job's call is answered, before
// the job is parked: the park is a transaction, and every call the gate
// lets through meanwhile, at a pace it does not know to be too fast yet,
// is answered 429 as well. The slot itself is still let go only once the
// job is parked (see heldSlot), and the gate is told once.
func TestA429ReachesTheGateBeforeTheJobIsParked(t *testing.T) {
	gate := &toldGate{}
	outbox := &askingOutbox{gate: gate}
	w := &Worker{slots: newSlots(4, time.Second, gate, nil)}
	throttled := func(*message.Message) ([]*message.Message, error) {
		return nil, &platformerr.Throttled{RetryAfter: time.Second, Scope: platformerr.ScopeApplication, Cause: errors.New("amazon answered 429")}
	}
	park := parkBackoff{initial: time.Millisecond, max: time.Millisecond, sleep: func(context.Context, time.Duration) {}}
	h := later(outbox, WorkerConfig{}.withDefaults().retryPolicy(), time.Now, slog.New(slog.DiscardHandler), &park, nil)(w.takeSlot(throttled))

	msg := ToMessage(ports.Message{ID: uuid.New(), WorkspaceID: uuid.New(), Type: "a", Destination: "amazon/a", CreatedAt: time.Now()})
	_, err := h(msg)
	require.NoError(t, err, "parked")
	want := CallResult{Throttled: true, RetryAfter: time.Second, OfApplication: true}
	require.Len(t, outbox.toldAtPark, 1)
	assert.Equal(t, []CallResult{want}, outbox.toldAtPark[0], "the gate knew of the 429 when the job was parked")
	assert.Equal(t, []CallResult{want}, gate.results(), "and was told once")
	running, _, _ := w.slots.stats()
	assert.Zero(t, running, "the slot is let go once the job is parked")
}
