package contract

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Ordering keys in the outbox: an event of key K is claimed only once
// every event of K committed before it has ended (its job's operation
// finished), whichever Dispatcher or worker holds it; a dead-lettered one
// holds its key until an operator redrives it; other keys flow.

// keyedJob is a job of key in workspace: its pending event and its
// running operation, which the event's payload names.
type keyedJob struct {
	event model.OutboxEvent
	op    model.Operation
}

// commitKeyedJobs writes each job in a transaction of its own, in order,
// so that their commit order is the slice's.
func commitKeyedJobs(t *testing.T, h Harness, ws uuid.UUID, at time.Time, keys ...string) []keyedJob {
	t.Helper()
	jobs := make([]keyedJob, len(keys))
	for i, key := range keys {
		e := newEvent(t, ws, at)
		e.OrderingKey = key
		opID, ok := model.JobOperationID(e.Payload)
		require.True(t, ok)
		op := newOperation(ws)
		op.ID, op.ResourceID, op.Status = opID, e.AggregateID, model.OperationRunning
		mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			if err := tx.Operations().Create(ctx, op); err != nil {
				return err
			}
			return tx.Outbox().Append(ctx, e)
		})
		jobs[i] = keyedJob{event: e, op: op}
	}
	return jobs
}

// endJob ends j's operation as its worker does.
func endJob(t *testing.T, h Harness, j keyedJob, status model.OperationStatus, at time.Time) {
	t.Helper()
	mustTransact(t, h, j.op.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		op := j.op
		op.Status, op.UpdatedAt = status, at
		return tx.Operations().Update(ctx, op)
	})
}

func testOutboxOrdering(t *testing.T, h Harness) {
	at := now()

	t.Run("the second event of a key is claimed only after the first one's operation ended; other keys flow", func(t *testing.T) {
		ws := newWorkspace(t, h)
		jobs := commitKeyedJobs(t, h, ws, at, "store/a", "store/a", "store/b")
		first, second, other := jobs[0], jobs[1], jobs[2]

		got := eventIDs(claimDue(t, h, ws, "d1", at, 10))
		require.ElementsMatch(t, []uuid.UUID{first.event.ID, other.event.ID}, got,
			"the first of store/a and the only one of store/b; not the second of store/a")
		require.Empty(t, claimDue(t, h, ws, "d2", at, 10), "the first is dispatching: the second waits")
		require.Equal(t, 2, markDispatched(t, h, ws, "d1", at, first.event.ID, other.event.ID))
		require.Empty(t, claimDue(t, h, ws, "d2", at, 10), "dispatched, its job still running: the second waits")

		endJob(t, h, other, model.OperationSucceeded, at)
		require.Empty(t, claimDue(t, h, ws, "d2", at, 10), "another key's end frees nothing of store/a")

		endJob(t, h, first, model.OperationSucceeded, at)
		got = eventIDs(claimDue(t, h, ws, "d2", at, 10))
		require.Equal(t, []uuid.UUID{second.event.ID}, got, "the first ended: the second goes")
	})

	t.Run("a job parked for a retry keeps its key's later jobs waiting", func(t *testing.T) {
		ws := newWorkspace(t, h)
		jobs := commitKeyedJobs(t, h, ws, at, "store/a", "store/a")
		require.Equal(t, []uuid.UUID{jobs[0].event.ID}, eventIDs(claimDue(t, h, ws, "d1", at, 10)))
		require.Equal(t, 1, markDispatched(t, h, ws, "d1", at, jobs[0].event.ID))
		require.True(t, deferEvent(t, h, ws, jobs[0].event.ID, at.Add(time.Hour), 1, model.JobWait{Kind: model.JobWaitRetry, For: "shopify/shop-1", Reason: "shopify/shop-1 is down"}))
		require.Empty(t, claimDue(t, h, ws, "d1", at.Add(time.Minute), 10), "the retry of the first comes before the second")
		require.Equal(t, []uuid.UUID{jobs[0].event.ID}, eventIDs(claimDue(t, h, ws, "d1", at.Add(time.Hour), 10)))
	})

	t.Run("a dead-lettered event holds its key until an operator redrives it", func(t *testing.T) {
		ws := newWorkspace(t, h)
		jobs := commitKeyedJobs(t, h, ws, at, "store/a", "store/a", "store/b")
		first, second, other := jobs[0], jobs[1], jobs[2]
		require.ElementsMatch(t, []uuid.UUID{first.event.ID, other.event.ID}, eventIDs(claimDue(t, h, ws, "d1", at, 10)))
		require.Equal(t, 2, markDispatched(t, h, ws, "d1", at, first.event.ID, other.event.ID))
		// The worker gives up on the first: its operation fails and its
		// event is dead-lettered.
		endJob(t, h, first, model.OperationFailed, at)
		mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			found, err := tx.Outbox().DeadLetterJob(ctx, first.event.ID, 1, "gave up")
			require.True(t, found)
			return err
		})
		require.Empty(t, claimDue(t, h, ws, "d1", at.Add(time.Hour), 10),
			"its operation failed, but the dead letter has not ended: the second waits for the operator")

		later := commitKeyedJobs(t, h, ws, at, "store/b")
		endJob(t, h, other, model.OperationSucceeded, at)
		require.Equal(t, []uuid.UUID{later[0].event.ID}, eventIDs(claimDue(t, h, ws, "d1", at, 10)), "other keys flow")

		require.Equal(t, 1, redrive(t, h, ws, []uuid.UUID{first.event.ID}, at))
		require.Equal(t, []uuid.UUID{first.event.ID}, eventIDs(claimDue(t, h, ws, "d1", at, 10)), "redriven, the first goes first")
		require.Equal(t, 1, markDispatched(t, h, ws, "d1", at, first.event.ID))
		require.Equal(t, []uuid.UUID{second.event.ID}, eventIDs(claimDue(t, h, ws, "d1", at, 10)),
			"the first's operation is finished (failed) and its event dispatched: the second goes")
	})

	t.Run("two Dispatchers claiming at once never hand out a key's event before the one before it ended", func(t *testing.T) {
		ws := newWorkspace(t, h)
		const n = 6
		keys := make([]string, n)
		for i := range keys {
			keys[i] = "store/a"
		}
		jobs := commitKeyedJobs(t, h, ws, at, keys...)
		byID := map[uuid.UUID]int{}
		for i, j := range jobs {
			byID[j.event.ID] = i
		}
		// inFlight is 1 from a claim of the key's event until just before
		// its operation's end commits: a claim of the next one can only
		// follow that commit, so it must find inFlight 0.
		var inFlight atomic.Int32
		var mu sync.Mutex
		var order []int
		done := make(chan struct{})
		var once sync.Once
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, owner := range []string{"d1", "d2"} {
			wg.Go(func() {
				<-start
				for {
					select {
					case <-done:
						return
					default:
					}
					claim, err := query(t, h, ws, func(ctx context.Context, tx ports.Tx) (ports.Claim, error) {
						return tx.OutboxDispatch().ClaimDue(ctx, owner, at, lease, 10, maxAttempts)
					})
					if err != nil {
						t.Error(err)
						once.Do(func() { close(done) })
						return
					}
					events := claimed(claim)
					if len(events) > 1 {
						t.Errorf("%s claimed %d jobs of one key at once", owner, len(events))
					}
					for _, e := range events {
						if !inFlight.CompareAndSwap(0, 1) {
							t.Errorf("%s claimed job %d while another job of its key had not ended", owner, byID[e.ID])
						}
						mu.Lock()
						order = append(order, byID[e.ID])
						last := len(order) == n
						mu.Unlock()
						if _, err := query(t, h, ws, func(ctx context.Context, tx ports.Tx) (int, error) {
							return tx.OutboxDispatch().MarkDispatched(ctx, owner, []uuid.UUID{e.ID}, at)
						}); err != nil {
							t.Error(err)
						}
						inFlight.Store(0)
						j := jobs[byID[e.ID]]
						if err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
							op := j.op
							op.Status, op.UpdatedAt = model.OperationSucceeded, at
							return tx.Operations().Update(ctx, op)
						}); err != nil {
							t.Error(err)
						}
						if last {
							once.Do(func() { close(done) })
						}
					}
					if t.Failed() {
						once.Do(func() { close(done) })
					}
				}
			})
		}
		close(start)
		wg.Wait()
		require.Equal(t, []int{0, 1, 2, 3, 4, 5}, order, "claimed one at a time, in commit order")
	})
}
