package dispatch_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/ports"
)

// runInBackground runs d until the test ends.
func runInBackground(t *testing.T, d *dispatch.Dispatcher) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { d.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// A commit through NotifyOnCommit wakes a Run loop that would otherwise
// sleep for an hour.
func TestRunWakesOnCommit(t *testing.T) {
	e := newEnv(t)
	sig := memory.NewSignal()
	pub := &recorder{}
	d, err := dispatch.New(dispatch.Config{Owner: "a", PollInterval: time.Hour}, dispatch.Deps{
		UnitOfWork: e.uow, Discovery: e.disc, Publisher: pub, Signal: sig, Clock: e.clock,
	})
	require.NoError(t, err)
	runInBackground(t, d)
	time.Sleep(20 * time.Millisecond) // let the first, empty round pass

	ws := uuid.New()
	uow := dispatch.NotifyOnCommit(e.uow, sig)
	require.NoError(t, uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		return appendOne(ctx, tx, ws)
	}))
	assert.Eventually(t, func() bool { return len(pub.countByID()) == 1 }, 5*time.Second, 5*time.Millisecond)
}

// After a full batch the loop goes again at once instead of waiting for the
// poll.
func TestRunDrainsABacklogWithoutWaiting(t *testing.T) {
	e := newEnv(t)
	ws := uuid.New()
	e.appendEvents(t, ws, 95)
	pub := &recorder{}
	d := e.dispatcher(t, dispatch.Config{Batch: 10, PollInterval: time.Hour}, pub)
	runInBackground(t, d)
	assert.Eventually(t, func() bool { return len(pub.countByID()) == 95 }, 5*time.Second, 5*time.Millisecond)
}
