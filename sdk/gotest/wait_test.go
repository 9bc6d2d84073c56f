package gotest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	once "github.com/oncehq/once/sdk/go"
	"github.com/oncehq/once/testsupport/apitest"
)

// adminClient is a client of s as its admin.
func adminClient(t *testing.T, s *apitest.Server) *once.ClientWithResponses {
	t.Helper()
	c, err := once.NewClientWithResponses(s.URL, once.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+s.Token)
		return nil
	}))
	require.NoError(t, err)
	return c
}

// WaitForOperation returns once the operation ends: the server holds its
// read (the test sees it parked) and answers it when the end commits.
func TestWaitForOperationReturnsWhenTheOperationEnds(t *testing.T) {
	s := apitest.Memory(t)
	c := adminClient(t, s)
	op := s.PendingOperation(t)

	type result struct {
		op  *once.Operation
		err error
	}
	done := make(chan result, 1)
	go func() {
		got, err := once.WaitForOperation(t.Context(), c, op.ID)
		done <- result{got, err}
	}()
	apitest.Eventually(t, 10*time.Second, "the read waiting on the server", func() bool { return s.Waiters.Waiting() == 1 })
	s.SucceedOperation(t, op)

	select {
	case r := <-done:
		require.NoError(t, r.err)
		assert.Equal(t, once.OperationStatusSucceeded, r.op.Status)
		assert.Equal(t, op.ID, r.op.Id)
	case <-time.After(10 * time.Second):
		t.Fatal("WaitForOperation did not return after the end (a read waits 25 s)")
	}
}

// At the caller's deadline it returns the context's error with the last
// state it read (the helper asks the server to answer a little before the
// deadline; an answer that comes later still leaves none); an unknown id
// is an error at once.
func TestWaitForOperationStopsAtTheDeadlineAndOnErrors(t *testing.T) {
	s := apitest.Memory(t)
	c := adminClient(t, s)
	op := s.PendingOperation(t)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	got, err := once.WaitForOperation(ctx, c, op.ID)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	if got != nil {
		assert.Equal(t, once.OperationStatusPending, got.Status, "the last state read")
	}

	got, err = once.WaitForOperation(t.Context(), c, uuid.New())
	require.ErrorContains(t, err, "404")
	assert.Nil(t, got)
}
