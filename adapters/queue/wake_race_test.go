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
	"github.com/oncehq/once/ports"
)

// slowPark is an outbox whose park of the second job commits only after
// a call to the destination was answered and its Wake took its snapshot
// (during runs, as the park's transaction is in flight).
type slowPark struct {
	parks  int
	during func()
}

func (o *slowPark) Defer(context.Context, ports.Message, time.Time, int, model.JobWait) error {
	if o.parks++; o.parks == 2 {
		o.during()
	}
	return nil
}

func (o *slowPark) Wake(context.Context, uuid.UUID, model.JobWaitKind, string, time.Duration, time.Duration) (int, error) {
	return 0, nil
}

// A job parked to sleep through an outage whose park commits after the
// destination's Wake read the parked jobs is woken again once parked: it
// would otherwise sleep the full outage wait.
func TestAParkThatCommitsAfterTheWakeIsWokenToo(t *testing.T) {
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	gate := &fakeGate{refuse: map[string]time.Time{"shopify/a": now.Add(time.Minute)}}
	s := newSlots(2, 2*time.Second, gate, func() time.Time { return now })
	s.woken = func(string, map[uuid.UUID]int) {} // the Wake, whose snapshot misses the park in flight
	var mu sync.Mutex
	var rewoken []string
	rewake := func(down string, _ uuid.UUID) {
		mu.Lock()
		defer mu.Unlock()
		rewoken = append(rewoken, down)
	}
	outbox := &slowPark{during: func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.answered("shopify/a", now) // a call started since the outage was answered
	}}
	w := &Worker{slots: s}
	never := func(*message.Message) ([]*message.Message, error) { return nil, errors.New("not reached") }
	h := later(outbox, WorkerConfig{}.withDefaults().retryPolicy(), func() time.Time { return now }, slog.New(slog.DiscardHandler),
		&parkBackoff{initial: time.Millisecond, max: time.Millisecond}, rewake)(w.takeSlot(never))
	ws := uuid.New()
	for range 2 { // the probe, then the sleeper
		_, err := h(ToMessage(ports.Message{ID: uuid.New(), WorkspaceID: ws, Type: "a", Destination: "shopify/a", CreatedAt: now}))
		require.NoError(t, err)
	}
	require.Equal(t, 2, outbox.parks)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"shopify/a"}, rewoken)
}
