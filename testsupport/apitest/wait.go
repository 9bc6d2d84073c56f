package apitest

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
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
