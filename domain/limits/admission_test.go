package limits_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/limits"
)

// long is a wait no test reaches: a waiter in these tests is served, or
// leaves for the reason the test gives it.
const long = time.Minute

// waitFor polls the admission's observable state; the deadline is generous for
// a loaded machine.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 30*time.Second, time.Millisecond, what)
}

// enter is Enter in a goroutine of its own: its answer arrives on the
// channel.
func enter(ctx context.Context, g *limits.Admission, ws uuid.UUID) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := g.Enter(ctx, ws)
		done <- err
	}()
	return done
}

func TestTheGateCapsEachWorkspaceApart(t *testing.T) {
	g := limits.NewAdmission(limits.AdmissionConfig{Max: 2}) // no wait: over the cap is refused at once
	a, b := uuid.New(), uuid.New()
	ctx := context.Background()
	for range 2 {
		waited, err := g.Enter(ctx, a)
		require.NoError(t, err)
		assert.False(t, waited)
	}
	_, err := g.Enter(ctx, a)
	assert.ErrorIs(t, err, limits.ErrQueueFull, "a third unit of a is over the cap")
	_, err = g.Enter(ctx, b)
	require.NoError(t, err, "b has slots of its own")
	g.Leave(a)
	assert.Equal(t, 1, g.InFlight(a))
	_, err = g.Enter(ctx, a)
	require.NoError(t, err, "a slot given back can be taken again")
	g.Leave(a)
	g.Leave(a)
	g.Leave(b)
	assert.Zero(t, g.InFlight(a))
	assert.Zero(t, g.InFlight(b))
	assert.Zero(t, limits.Tracked(g), "an idle admission holds nothing")

	open := limits.NewAdmission(limits.AdmissionConfig{Max: 0, Wait: long})
	for range 100 {
		_, err := open.Enter(ctx, a)
		require.NoError(t, err, "no cap")
	}
}

// Over the cap, units wait and are served in the order they came: each
// slot given back goes to the first waiter.
func TestWaitersAreServedFirstComeFirstServed(t *testing.T) {
	g := limits.NewAdmission(limits.AdmissionConfig{Max: 1, Wait: long})
	ws := uuid.New()
	_, err := g.Enter(context.Background(), ws)
	require.NoError(t, err)

	const waiters = 4
	served := make(chan int, waiters)
	for i := range waiters {
		go func() {
			waited, err := g.Enter(context.Background(), ws)
			if assert.NoError(t, err) {
				assert.True(t, waited)
				served <- i
			}
		}()
		waitFor(t, "waiter queued", func() bool { return g.Waiting(ws) == i+1 })
	}
	for i := range waiters {
		g.Leave(ws) // the holder's slot, then each waiter's in turn
		assert.Equal(t, i, <-served, "the first waiter is served")
		assert.Equal(t, 1, g.InFlight(ws), "the slot changed hands")
		assert.Equal(t, waiters-i-1, g.Waiting(ws))
	}
	g.Leave(ws)
	assert.Zero(t, g.InFlight(ws))
	assert.Zero(t, limits.Tracked(g))
}

// A wait that runs out is refused and holds nothing.
func TestAWaitThatRunsOutIsRefused(t *testing.T) {
	g := limits.NewAdmission(limits.AdmissionConfig{Max: 1, Wait: time.Millisecond})
	ws := uuid.New()
	_, err := g.Enter(context.Background(), ws)
	require.NoError(t, err)
	waited, err := g.Enter(context.Background(), ws) // the holder never leaves
	assert.ErrorIs(t, err, limits.ErrWaitTimedOut)
	assert.False(t, waited)
	assert.Zero(t, g.Waiting(ws))
	assert.Equal(t, 1, g.InFlight(ws))
	g.Leave(ws)
	assert.Zero(t, limits.Tracked(g))
}

// A waiter whose context ends leaves the queue with its context's cause;
// the one behind it takes its place.
func TestAnEndedContextFreesItsPlaceInTheQueue(t *testing.T) {
	g := limits.NewAdmission(limits.AdmissionConfig{Max: 1, Wait: long})
	ws := uuid.New()
	_, err := g.Enter(context.Background(), ws)
	require.NoError(t, err)

	ctx, cancel := context.WithCancelCause(context.Background())
	gone := errors.New("client gone")
	first := enter(ctx, g, ws)
	waitFor(t, "first queued", func() bool { return g.Waiting(ws) == 1 })
	second := enter(context.Background(), g, ws)
	waitFor(t, "second queued", func() bool { return g.Waiting(ws) == 2 })

	cancel(gone)
	assert.ErrorIs(t, <-first, gone)
	assert.Equal(t, 1, g.Waiting(ws), "the first left the queue")
	assert.Equal(t, 1, g.InFlight(ws))

	g.Leave(ws)
	require.NoError(t, <-second, "the slot went to the one still waiting")
	assert.Equal(t, 1, g.InFlight(ws))
	g.Leave(ws)
	assert.Zero(t, limits.Tracked(g))
}

// The queue is bounded: past WaitingPerSlot × the cap (or MaxWaiting),
// a unit is refused at once.
func TestAFullQueueRefusesAtOnce(t *testing.T) {
	for name, c := range map[string]struct {
		cfg     limits.AdmissionConfig
		waiting int
	}{
		"default": {limits.AdmissionConfig{Max: 2, Wait: long}, limits.WaitingPerSlot * 2},
		"set":     {limits.AdmissionConfig{Max: 2, Wait: long, MaxWaiting: 3}, 3},
	} {
		t.Run(name, func(t *testing.T) {
			g := limits.NewAdmission(c.cfg)
			ws := uuid.New()
			for range 2 {
				_, err := g.Enter(context.Background(), ws)
				require.NoError(t, err)
			}
			var queued []<-chan error
			for i := range c.waiting {
				queued = append(queued, enter(context.Background(), g, ws))
				waitFor(t, "queued", func() bool { return g.Waiting(ws) == i+1 })
			}
			_, err := g.Enter(context.Background(), ws)
			assert.ErrorIs(t, err, limits.ErrQueueFull)
			assert.Equal(t, c.waiting, g.Waiting(ws))

			for range 2 + c.waiting {
				g.Leave(ws)
			}
			for _, q := range queued {
				require.NoError(t, <-q)
			}
			assert.Zero(t, limits.Tracked(g))
		})
	}
}

// Many units entering, leaving and giving up at random never hold more
// than the cap, and leave nothing behind. The wait is tiny so that waits
// often end just as a slot is handed over, which must pass it on.
func TestTheGateLeaksNoSlot(t *testing.T) {
	const max = 3
	g := limits.NewAdmission(limits.AdmissionConfig{Max: max, Wait: 20 * time.Microsecond, MaxWaiting: 8})
	workspaces := []uuid.UUID{uuid.New(), uuid.New()}
	var holding [2]atomic.Int32
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range 200 {
				i := r.IntN(len(workspaces))
				ctx, cancel := context.WithCancel(context.Background())
				if r.IntN(3) == 0 {
					go cancel() // ends at any moment of the wait, or of none
				}
				if _, err := g.Enter(ctx, workspaces[i]); err == nil {
					assert.LessOrEqual(t, holding[i].Add(1), int32(max))
					for range r.IntN(100) {
						_ = r.Int() // hold the slot a little
					}
					holding[i].Add(-1)
					g.Leave(workspaces[i])
				}
				cancel()
			}
		})
	}
	wg.Wait()
	for _, ws := range workspaces {
		assert.Zero(t, g.InFlight(ws))
		assert.Zero(t, g.Waiting(ws))
	}
	assert.Zero(t, limits.Tracked(g))
}
