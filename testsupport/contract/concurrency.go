package contract

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

func testConcurrency(t *testing.T, h Harness) {
	// N identical requests at once: exactly one executes; every other one
	// is told "in progress" while the first is still open. The executor
	// holds its transaction until all the others have answered, so this
	// shows they never waited on it, and none can have seen it commit.
	t.Run("concurrent claims on one scope execute once", func(t *testing.T) {
		const n = 20
		ws := newWorkspace(t, h)
		scope := newScope(ws, newMember(t, h, ws))

		type outcome struct {
			store    uuid.UUID
			executed bool
			replayed *model.IdempotencyRecord
			err      error
		}
		outcomes := make([]outcome, n)
		start := make(chan struct{})
		othersAnswered := make(chan struct{})
		var answered atomic.Int32
		var executions atomic.Int32
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				o := &outcomes[i]
				store := newStore(ws)
				o.store = store.ID
				<-start
				o.err = h.UoW.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
					existing, err := tx.Idempotency().Claim(ctx, newRecord(scope))
					if err != nil {
						return err
					}
					if existing != nil {
						o.replayed = existing
						return nil
					}
					if err := tx.Stores().Create(ctx, store); err != nil {
						return err
					}
					event, err := model.NewOutboxEvent(uuid.New(), ws, model.EventStoreCredentialsVerify, "store", store.ID,
						model.StoreCredentialsVerify{StoreID: store.ID, CredentialVersion: 1, JobOperation: model.JobOperation{OperationID: uuid.New()}}, now())
					if err != nil {
						return err
					}
					if err := tx.Outbox().Append(ctx, event); err != nil {
						return err
					}
					select {
					case <-othersAnswered:
					case <-time.After(answerDeadline):
						return domain.Errorf(domain.CodeInternal, "contract: the duplicates did not all answer while the first request was open")
					}
					resp := model.SavedResponse{Status: 201, Headers: map[string]string{}, Body: []byte(store.ID.String())}
					if err := tx.Idempotency().Complete(ctx, scope, resp, now()); err != nil {
						return err
					}
					o.executed = true
					return nil
				})
				if o.executed && o.err == nil {
					executions.Add(1)
				} else if answered.Add(1) == n-1 {
					close(othersAnswered)
				}
			})
		}
		close(start)
		wg.Wait()

		require.EqualValues(t, 1, executions.Load(), "executions")
		var winner uuid.UUID
		for _, o := range outcomes {
			if o.executed && o.err == nil {
				winner = o.store
			}
		}
		for i, o := range outcomes {
			if o.executed && o.err == nil {
				continue
			}
			require.Nil(t, o.replayed, "goroutine %d replayed a record that was not committed yet", i)
			requireCode(t, o.err, domain.CodeIdempotencyInProgress)
		}

		stores := 0
		for _, o := range outcomes {
			_, err := storeTable.get(t, h, ws, o.store)
			if err == nil {
				stores++
				continue
			}
			requireCode(t, err, domain.CodeNotFound)
		}
		require.Equal(t, 1, stores, "stores written")
		events := listEvents(t, h, ws, "", 100)
		require.Len(t, events, 1, "events written")
		require.Equal(t, winner, events[0].AggregateID)

		existing, err := claim(t, h, newRecord(scope))
		require.NoError(t, err)
		require.NotNil(t, existing)
		require.Equal(t, winner.String(), string(existing.Response.Body))
	})
}
