package operator_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/testkit"
)

func (h harness) operation(t *testing.T, workspace uuid.UUID, status model.OperationStatus) model.Operation {
	return testkit.Operation(t, h.uow, workspace, uuid.New(), status, h.now.Add(-time.Minute))
}

// An operator cancels as a user does: a pending operation ends
// cancelled, a second cancel answers the same, a running one has its
// cancel requested, a finished one is refused with a stable code.
func TestConsoleCancelsAnOperationAsTheAPIDoes(t *testing.T) {
	h := newHarness()
	ws := uuid.New()
	pending := h.operation(t, ws, model.OperationPending)
	op, err := h.console.Cancel(t.Context(), ws, pending.ID)
	require.NoError(t, err)
	assert.Equal(t, model.OperationCancelled, op.Status)
	again, err := h.console.Cancel(t.Context(), ws, pending.ID)
	require.NoError(t, err)
	assert.Equal(t, model.OperationCancelled, again.Status, "cancel twice answers the same")

	running := h.operation(t, ws, model.OperationRunning)
	op, err = h.console.Cancel(t.Context(), ws, running.ID)
	require.NoError(t, err)
	assert.Equal(t, model.OperationRunning, op.Status)
	assert.True(t, op.CancelRequested(), "the running job is told to stop")

	done := h.operation(t, ws, model.OperationSucceeded)
	_, err = h.console.Cancel(t.Context(), ws, done.ID)
	assert.True(t, domain.IsCode(err, domain.CodeOperationFinished), "%v", err)

	_, err = h.console.Cancel(t.Context(), uuid.New(), pending.ID)
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "another workspace's: %v", err)
}

// The console lists a workspace's recent cancels: the cancelled
// operations and the running ones told to stop.
func TestConsoleListsAWorkspacesCancels(t *testing.T) {
	h := newHarness()
	ws := uuid.New()
	pending, running := h.operation(t, ws, model.OperationPending), h.operation(t, ws, model.OperationRunning)
	h.operation(t, ws, model.OperationRunning)
	h.operation(t, ws, model.OperationSucceeded)
	for _, op := range []model.Operation{pending, running} {
		_, err := h.console.Cancel(t.Context(), ws, op.ID)
		require.NoError(t, err)
	}
	c, err := h.console.Cancels(t.Context(), ws)
	require.NoError(t, err)
	require.Len(t, c.Cancelled, 1)
	assert.Equal(t, pending.ID, c.Cancelled[0].ID)
	require.Len(t, c.Stopping, 1)
	assert.Equal(t, running.ID, c.Stopping[0].ID)

	other, err := h.console.Cancels(t.Context(), uuid.New())
	require.NoError(t, err)
	assert.Empty(t, other.Cancelled, "another workspace's")
}
