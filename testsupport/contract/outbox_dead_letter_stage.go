package contract

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// testDeadLetterStage covers where a dead letter gave up and the job's
// attempts, read from their own columns (sql/025_dead_letter_stage.sql),
// never from its last error: a text written for people may read like
// anything.
func testDeadLetterStage(t *testing.T, h Harness) {
	at := now()

	t.Run("a job given up on is a dead letter of its job, with the worker's attempts", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := newEvent(t, ws, at)
		appendEvents(t, h, ws, e)
		found := mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) (bool, error) {
			return tx.Outbox().DeadLetterJob(ctx, e.ID, 3, "the platform said no")
		})
		require.True(t, found)
		got := mustGetEvent(t, h, ws, e.ID)
		require.Equal(t, model.FailedInJob, got.FailedIn)
		require.Equal(t, "job", dispatch.Stage(got))
		require.Equal(t, 3, got.JobAttempts)
		require.Equal(t, 0, got.AttemptCount, "the worker's runs are not deliveries")

		require.Equal(t, 1, redrive(t, h, ws, []uuid.UUID{e.ID}, at))
		got = mustGetEvent(t, h, ws, e.ID)
		require.Empty(t, got.FailedIn, "a redriven event is no dead letter")
		require.Zero(t, got.JobAttempts)
	})

	t.Run("a broker's dead letter whose error reads like a job's is the delivery's", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := claimedEvent(t, h, ws, "d1", at)
		lookalike := "job failed: after 3 attempts: broker refused"
		require.True(t, deadLetter(t, h, ws, "d1", e.ID, lookalike))
		got := mustGetEvent(t, h, ws, e.ID)
		require.Equal(t, lookalike, got.LastError)
		require.Equal(t, model.FailedInDelivery, got.FailedIn)
		require.Equal(t, "delivery", dispatch.Stage(got))
	})

	t.Run("a negative count of attempts is refused", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := newEvent(t, ws, at)
		appendEvents(t, h, ws, e)
		err := h.UoW.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
			_, err := tx.Outbox().DeadLetterJob(ctx, e.ID, -1, "x")
			return err
		})
		require.True(t, domain.IsCode(err, domain.CodeValidation), "got %v", err)
	})
}
