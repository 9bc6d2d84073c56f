package contract

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// answerDeadline bounds how long a test waits for an answer that must come
// without waiting on another transaction. The transactions it could wait on
// are held open until the answer came, so an implementation that waits never
// answers in time, however fast or slow the machine: the bound only keeps a
// failing run from hanging, it measures nothing.
const answerDeadline = 30 * time.Second

// replayers is how many transactions replay one record at once. They all
// stay open together, so it must fit in the smallest pool a harness uses.
const replayers = 8

// testIdempotencyReplays: a retry of a completed request is a plain read,
// never blocked or refused by anything another transaction holds.
func testIdempotencyReplays(t *testing.T, h Harness) {
	t.Run("a completed record is replayed while another replay is still open", func(t *testing.T) {
		rec, resp, at := completedRecord(t, h)

		var first *model.IdempotencyRecord
		release := holdOpen(t, h, rec.Scope.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
			var err error
			first, err = tx.Idempotency().Claim(ctx, newRecord(rec.Scope))
			return err
		}, rollBack)
		requireCompleted(t, rec, resp, at, first)

		existing, err := claimWithin(t, h, newRecord(rec.Scope))
		require.NoError(t, err, "a replay beside an open replay")
		requireCompleted(t, rec, resp, at, existing)
		require.ErrorIs(t, release(), errRollback)
	})

	t.Run("many replays at once all get the saved response", func(t *testing.T) {
		rec, resp, at := completedRecord(t, h)
		ws := rec.Scope.WorkspaceID

		// Every replay keeps its transaction open until all have claimed,
		// so they overlap whatever the scheduling.
		type result struct {
			existing *model.IdempotencyRecord
			err      error
		}
		results := make(chan result, replayers)
		allClaimed := make(chan struct{})
		var claimed sync.WaitGroup
		claimed.Add(replayers)
		go func() { claimed.Wait(); close(allClaimed) }()
		var wg sync.WaitGroup
		for range replayers {
			wg.Go(func() {
				var r result
				err := h.UoW.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
					r.existing, r.err = tx.Idempotency().Claim(ctx, newRecord(rec.Scope))
					claimed.Done()
					select {
					case <-allClaimed:
					case <-time.After(answerDeadline):
					}
					return errRollback
				})
				if r.err == nil && err != nil && !errors.Is(err, errRollback) {
					r.err = err
				}
				results <- r
			})
		}
		wg.Wait()
		close(results)
		for r := range results {
			require.NoError(t, r.err, "a concurrent replay")
			requireCompleted(t, rec, resp, at, r.existing)
		}
	})

	t.Run("an expired record being replaced is in progress, not replayed", func(t *testing.T) {
		scope := scopeWithExpiredRecord(t, h)
		ws := scope.WorkspaceID
		fresh := newRecord(scope)
		release := holdOpen(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			existing, err := tx.Idempotency().Claim(ctx, fresh)
			if err == nil && existing != nil {
				err = domain.Errorf(domain.CodeInternal, "contract: an expired record was replayed")
			}
			return err
		}, func(ctx context.Context, tx ports.Tx) error {
			return tx.Idempotency().Complete(ctx, scope, savedResponse(), now())
		})

		_, err := claimWithin(t, h, newRecord(scope))
		requireCode(t, err, domain.CodeIdempotencyInProgress)
		require.NoError(t, release())
	})
}

// completedRecord is a record claimed and completed in a fresh workspace,
// with the response and the time it was completed with.
func completedRecord(t *testing.T, h Harness) (model.IdempotencyRecord, model.SavedResponse, time.Time) {
	t.Helper()
	ws := newWorkspace(t, h)
	rec := newRecord(newScope(ws, newMember(t, h, ws)))
	resp := savedResponse()
	at := now()
	claimAndComplete(t, h, rec, resp, at)
	return rec, resp, at
}

// scopeWithExpiredRecord is a scope in a fresh workspace whose completed
// record expired an hour ago.
func scopeWithExpiredRecord(t *testing.T, h Harness) model.IdempotencyScope {
	t.Helper()
	ws := newWorkspace(t, h)
	scope := newScope(ws, newMember(t, h, ws))
	old := expiredRecord(scope, now().Add(-time.Hour))
	claimAndComplete(t, h, old, savedResponse(), old.CreatedAt.Add(time.Second))
	return scope
}

// claimWithin is claim, failing the test if it does not answer within
// answerDeadline (callers hold what a waiting Claim would wait for).
func claimWithin(t *testing.T, h Harness, rec model.IdempotencyRecord) (*model.IdempotencyRecord, error) {
	t.Helper()
	type result struct {
		existing *model.IdempotencyRecord
		err      error
	}
	answered := make(chan result, 1)
	go func() {
		existing, err := claim(t, h, rec)
		answered <- result{existing, err}
	}()
	select {
	case r := <-answered:
		return r.existing, r.err
	case <-time.After(answerDeadline):
		t.Fatalf("Claim did not answer within %s while another transaction held the scope: it waits", answerDeadline)
		return nil, nil
	}
}
