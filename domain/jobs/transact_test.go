package jobs_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

func TestTransactLogsOnlyAfterTheCommit(t *testing.T) {
	uow := memory.NewUnitOfWork(memory.NewDB())
	logs := &testkit.LogBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil)).With("handler", "test")
	ws := uuid.New()

	err := jobs.Transact(context.Background(), uow, ws, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		log.With("task", "t1").Info("task done")
		assert.Empty(t, logs.String(), "nothing is written before the commit")
		return nil
	})
	require.NoError(t, err)
	assert.Contains(t, logs.String(), "task done")
	assert.Contains(t, logs.String(), "handler=test task=t1", "the logger's attributes are kept")

	rolledBack := errors.New("roll back")
	err = jobs.Transact(context.Background(), uow, ws, log, func(ctx context.Context, tx ports.Tx, log *slog.Logger) error {
		log.Info("never happened")
		return rolledBack
	})
	require.ErrorIs(t, err, rolledBack)
	assert.NotContains(t, logs.String(), "never happened", "a rolled back outcome is not logged")
	assert.Equal(t, 1, strings.Count(logs.String(), "\n"))
}

// An operation a job ends failed reaches the worker's report once the
// transaction committed, and not when it rolled back.
func TestTransactReportsAFailedOperationOnlyAfterTheCommit(t *testing.T) {
	uow := memory.NewUnitOfWork(memory.NewDB())
	log := slog.New(slog.DiscardHandler)
	ws := uuid.New()
	now := time.Now()
	newOperation := func() model.Operation {
		op := model.Operation{
			ID: uuid.New(), WorkspaceID: ws, Kind: model.OperationStoreVerify, Status: model.OperationRunning,
			ResourceType: "store", ResourceID: uuid.New(), CreatedAt: now, UpdatedAt: now,
		}
		require.NoError(t, uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
			return tx.Operations().Create(ctx, op)
		}))
		return op
	}
	end := func(ctx context.Context, op model.Operation, then error) error {
		return jobs.Transact(ctx, uow, ws, log, func(ctx context.Context, tx ports.Tx, _ *slog.Logger) error {
			if err := jobs.EndOperation(ctx, tx, op, "credentials refused", now); err != nil {
				return err
			}
			return then
		})
	}

	ctx, report := domain.WithJobReport(context.Background())
	require.Error(t, end(ctx, newOperation(), errors.New("roll back")))
	assert.False(t, report.OperationFailed(), "a rolled back failure is not the job's outcome")

	require.NoError(t, end(ctx, newOperation(), nil))
	assert.True(t, report.OperationFailed())

	ctx, report = domain.WithJobReport(context.Background())
	require.NoError(t, jobs.Transact(ctx, uow, ws, log, func(context.Context, ports.Tx, *slog.Logger) error { return nil }))
	assert.False(t, report.OperationFailed(), "nothing failed")
}
