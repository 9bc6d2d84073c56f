package jobs_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain/jobs"
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
