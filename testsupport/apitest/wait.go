package apitest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Operation is an operation as the API shows it.
type Operation struct {
	ID     uuid.UUID `json:"id"`
	Status string    `json:"status"`
	Error  string    `json:"error"`
}

// WaitOperation polls GET /v1/operations/{id} until it reaches one of the
// final states (succeeded, failed, cancelled) or the timeout passes, and
// returns it.
func (s *Server) WaitOperation(t testing.TB, id uuid.UUID, timeout time.Duration) Operation {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var op Operation
	for {
		r := s.Do(t, "GET", "/v1/operations/"+id.String(), nil, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("get operation: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &op)
		if op.Status == "succeeded" || op.Status == "failed" || op.Status == "cancelled" {
			return op
		}
		if time.Now().After(deadline) {
			t.Fatalf("operation %s still %s after %s", id, op.Status, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Eventually polls cond until it holds or the timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// PendingOperation writes a pending operation in s's workspace through
// s's unit of work, as a use case would, for a test that waits for it.
func (s *Server) PendingOperation(t testing.TB) model.Operation {
	t.Helper()
	now := time.Now()
	op := model.Operation{
		ID: uuid.New(), WorkspaceID: s.Workspace, Kind: model.OperationStoreVerify, Status: model.OperationPending,
		ResourceType: "store", ResourceID: uuid.New(), CreatedBy: s.User, CreatedAt: now, UpdatedAt: now,
	}
	s.writeOperation(t, op, func(ctx context.Context, tx ports.Tx) error { return tx.Operations().Create(ctx, op) })
	return op
}

// SucceedOperation ends op succeeded through s's unit of work, as a worker
// would, and returns when the end committed (any server on s's database
// may record it).
func (s *Server) SucceedOperation(t testing.TB, op model.Operation) time.Time {
	t.Helper()
	op.Succeed(time.Now())
	s.writeOperation(t, op, func(ctx context.Context, tx ports.Tx) error { return tx.Operations().Update(ctx, op) })
	return time.Now()
}

func (s *Server) writeOperation(t testing.TB, op model.Operation, write func(context.Context, ports.Tx) error) {
	t.Helper()
	if err := s.UoW.Transact(context.Background(), op.WorkspaceID, write); err != nil {
		t.Fatalf("write operation %s: %v", op.ID, err)
	}
}
