package dispatch_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// runRelay runs a relay over e's database until stop, which returns once
// Run has.
func (e *env) runRelay(t *testing.T, hooks dispatch.RelayHooks) (uow ports.UnitOfWork, stop func()) {
	t.Helper()
	r, err := dispatch.NewRelay(dispatch.RelayConfig{Holder: "relay-test", Hold: relayHold},
		dispatch.RelayDeps{Marks: memory.NewOutboxRelayMarks(e.db), Publisher: &recorder{}, Clock: e.clock, Logger: e.logger(), Hooks: hooks})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return r.UnitOfWork(e.uow), stop
}

// notHeld says an event is no longer the relay's: delivered, or due for
// the Dispatchers now rather than when its hold ends.
func (e *env) notHeld(ev model.OutboxEvent) bool {
	return ev.Status == model.OutboxDispatched ||
		ev.Status == model.OutboxPending && ev.LockedBy == "" && !ev.NextAttemptAt.After(e.clock.Now())
}

// A commit whose events reach the relay as it stops is not left to its
// hold (the Dispatchers would deliver it only when the hold ends): Stop
// returns after the final drain, and the writer, held at a point of its
// hand-over until then, finds the events released when its Transact
// returns. Committed holds it before it reaches the relay; Handing after
// the relay took the events, before they are queued.
func TestRelayStopLeavesNoCommitHeld(t *testing.T) {
	for _, point := range []string{"Committed", "Handing"} {
		t.Run(point, func(t *testing.T) {
			e := newEnv(t)
			reached, proceed := make(chan struct{}), make(chan struct{})
			hold := func([]model.OutboxEvent) { close(reached); <-proceed }
			hooks := dispatch.RelayHooks{Committed: hold}
			if point == "Handing" {
				hooks = dispatch.RelayHooks{Handing: hold}
			}
			uow, stop := e.runRelay(t, hooks)
			ws := uuid.New()
			committed := make(chan []model.OutboxEvent, 1)
			go func() { committed <- e.commit(t, uow, ws, 1) }()
			<-reached
			stop()
			close(proceed)
			events := <-committed

			got := e.event(t, ws, events[0].ID)
			assert.True(t, e.notHeld(got), "left held after the relay stopped: %s, locked by %q, due %s after now",
				got.Status, got.LockedBy, got.NextAttemptAt.Sub(e.clock.Now()))
			assert.Zero(t, got.AttemptCount)
		})
	}
}

// Many writers commit while the relay stops: once Stop and every
// Transact have returned, none of their events is left to its hold.
func TestRelayStopRacingManyCommitsLeavesNoneHeld(t *testing.T) {
	e := newEnv(t)
	uow, stop := e.runRelay(t, dispatch.RelayHooks{})
	ws := uuid.New()
	var mu sync.Mutex
	var all []model.OutboxEvent
	var writers sync.WaitGroup
	started := make(chan struct{})
	for w := range 16 {
		writers.Go(func() {
			for i := range 20 {
				if w == 0 && i == 5 {
					close(started)
				}
				events := e.commit(t, uow, ws, 1)
				mu.Lock()
				all = append(all, events...)
				mu.Unlock()
			}
		})
	}
	<-started
	stop()
	writers.Wait()
	for _, ev := range all {
		got := e.event(t, ws, ev.ID)
		require.True(t, e.notHeld(got), "left held: %s, locked by %q", got.Status, got.LockedBy)
	}
}
