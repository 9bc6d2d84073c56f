package queue

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
)

// tokenGate is a destination's bucket: each call takes a token, and a
// call that ends Abandoned (it teaches nothing) gives it back.
type tokenGate struct {
	mu     sync.Mutex
	tokens int
}

func (g *tokenGate) Try(string) (func(CallResult), Refusal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.tokens == 0 {
		return nil, Refusal{Until: time.Now().Add(time.Hour), Why: WhyPaced}
	}
	g.tokens--
	return func(r CallResult) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if r.Abandoned {
			g.tokens++
		}
	}, Refusal{}
}

func (g *tokenGate) left() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tokens
}

// unreachableOutbox fails every park, as the database does in an outage.
type unreachableOutbox struct{ parks int }

func (o *unreachableOutbox) Defer(context.Context, ports.Message, time.Time, int, model.JobWait) error {
	o.parks++
	return errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
}

func (o *unreachableOutbox) Wake(context.Context, uuid.UUID, model.JobWaitKind, string, time.Duration, time.Duration) (int, error) {
	return 0, nil
}

// backoffs records the waits before a message is handed back, without
// spending them.
type backoffs struct{ waited []time.Duration }

func (b *backoffs) sleep(_ context.Context, d time.Duration) { b.waited = append(b.waited, d) }

// While the database is down, a job whose call failed cannot be parked:
// its message goes back to the broker, which hands it out again at once.
// Each of those spins takes a token of its destination; a failed park
// gives it back (the call ends Abandoned, which teaches nothing), or the
// bucket is empty when the database returns. And each spin waits longer
// before the message goes back.
func TestAFailedParkDrainsNoTokenAndBacksOff(t *testing.T) {
	gate := &tokenGate{tokens: 3}
	outbox := &unreachableOutbox{}
	slept := &backoffs{}
	w := &Worker{slots: newSlots(4, time.Second, gate, nil)}
	failing := func(*message.Message) ([]*message.Message, error) {
		return nil, platformerr.Upstream(errors.New("shopify answered 503"))
	}
	park := parkBackoff{initial: 100 * time.Millisecond, max: 30 * time.Second, sleep: slept.sleep}
	h := later(outbox, WorkerConfig{}.withDefaults().retryPolicy(), time.Now, slog.New(slog.DiscardHandler), &park, nil)(w.takeSlot(failing))

	const spins = 10
	for range spins {
		msg := ToMessage(ports.Message{ID: uuid.New(), WorkspaceID: uuid.New(), Type: "a", Destination: "shopify/a", CreatedAt: time.Now()})
		_, err := h(msg)
		var r *redeliver
		require.ErrorAs(t, err, &r, "handed back to the broker")
	}
	assert.Equal(t, spins, outbox.parks, "every spin ran the job and tried to park it")
	assert.Equal(t, 3, gate.left(), "a failed park gives its token back")
	require.Len(t, slept.waited, spins, "each spin waits before the message goes back")
	for _, d := range slept.waited {
		assert.True(t, d >= park.initial/2 && d < park.max*3/2, "within the bounds, ±half: %s", d)
	}
	assert.Greater(t, slept.waited[spins-1], slept.waited[0], "the waits grow")
}
