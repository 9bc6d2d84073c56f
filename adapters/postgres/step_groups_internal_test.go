package postgres

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// A panic in a batch (in a member's code, which its leader runs) lets
// every member go with an error and leaves the group to its next step,
// which leads at once; the leader panics, as the member's code would have
// in its own goroutine.
func TestAPanicInABatchLetsEveryStepGo(t *testing.T) {
	out := make(chan struct{})
	release := make(chan struct{})
	var sends atomic.Int32
	g := &group{send: func(_ *pgx.Conn, batch []*groupedStep) {
		if sends.Add(1) == 1 {
			close(out)
			<-release
			batch[0].err = nil
			return
		}
		panic("boom")
	}}
	step := func() *groupedStep { return &groupedStep{ctx: context.Background()} }
	var wg sync.WaitGroup
	var firstErr, followerErr error
	var panics atomic.Int32
	run := func(err *error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					require.Equal(t, "boom", p)
					panics.Add(1)
				}
			}()
			*err = g.join(nil, step())
		}()
	}
	run(&firstErr)
	<-out
	// Two steps wait for the batch out, and go together in the next,
	// which panics: one leads it (and panics), the other gets the error.
	var a, b error
	run(&a)
	run(&b)
	for g.waiting() != 2 {
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	require.NoError(t, firstErr)
	require.Equal(t, int32(1), panics.Load(), "the leader of the batch that panicked")
	followerErr = a
	if followerErr == nil {
		followerErr = b
	}
	require.ErrorContains(t, followerErr, "boom")

	// Nobody leads: the next step's batch goes at once.
	g.send = func(_ *pgx.Conn, batch []*groupedStep) {}
	require.NoError(t, g.join(nil, step()))
}
