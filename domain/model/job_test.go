package model

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
)

// seqIDs hands out the ids it holds, in order.
type seqIDs []uuid.UUID

func (s *seqIDs) NewID() uuid.UUID {
	id := (*s)[0]
	*s = (*s)[1:]
	return id
}

func TestNewJob(t *testing.T) {
	opID, eventID, resource := uuid.New(), uuid.New(), uuid.New()
	ids := seqIDs{opID, eventID}
	p := Principal{WorkspaceID: uuid.New(), UserID: uuid.New()}
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx := domain.WithTraceparent(context.Background(), tp)

	op, event, err := NewJob(ctx, &ids, p, now, JobSpec{
		OperationKind: OperationStoreVerify,
		ResourceType:  "store",
		ResourceID:    resource,
		EventType:     EventStoreCredentialsVerify,
		Payload: func(op JobOperation) any {
			return StoreCredentialsVerify{StoreID: resource, CredentialVersion: 3, JobOperation: op}
		},
		Destination: Destination{System: "shopify", Account: "shop-1"},
		OrderingKey: "store/1",
	})
	require.NoError(t, err)

	assert.Equal(t, Operation{
		ID: opID, WorkspaceID: p.WorkspaceID, Kind: OperationStoreVerify, Status: OperationPending,
		ResourceType: "store", ResourceID: resource, CreatedBy: p.UserID, CreatedAt: now, UpdatedAt: now,
	}, op)

	assert.Equal(t, eventID, event.ID)
	assert.Equal(t, p.WorkspaceID, event.WorkspaceID)
	assert.Equal(t, EventStoreCredentialsVerify, event.Type)
	assert.Equal(t, "store", event.AggregateType)
	assert.Equal(t, resource, event.AggregateID)
	assert.Equal(t, OutboxPending, event.Status)
	assert.Equal(t, now, event.NextAttemptAt)
	assert.Equal(t, now, event.CreatedAt)
	assert.Equal(t, tp, event.Traceparent)
	assert.Equal(t, "shopify/shop-1", event.Destination)
	assert.Equal(t, "store/1", event.OrderingKey)
	assert.Zero(t, event.JobAttempts)
	var payload StoreCredentialsVerify
	require.NoError(t, json.Unmarshal(event.Payload, &payload))
	assert.Equal(t, StoreCredentialsVerify{StoreID: resource, CredentialVersion: 3, JobOperation: JobOperation{OperationID: opID}}, payload)
}

func TestNewJobWithoutTraceparent(t *testing.T) {
	ids := seqIDs{uuid.New(), uuid.New()}
	_, event, err := NewJob(context.Background(), &ids, Principal{WorkspaceID: uuid.New()}, time.Now(), JobSpec{
		EventType: "x", ResourceType: "x", ResourceID: uuid.New(),
		Payload: func(op JobOperation) any { return op },
	})
	require.NoError(t, err)
	assert.Empty(t, event.Traceparent)
	assert.Empty(t, event.Destination, "a job without a destination calls nothing outside")
	assert.Empty(t, event.OrderingKey)
}

func TestNewJobRefusesAnUnsafePayload(t *testing.T) {
	ids := seqIDs{uuid.New(), uuid.New()}
	_, _, err := NewJob(context.Background(), &ids, Principal{WorkspaceID: uuid.New()}, time.Now(), JobSpec{
		EventType: "x", ResourceType: "x", ResourceID: uuid.New(),
		Payload: func(JobOperation) any { return map[string]string{"password": "hunter2"} },
	})
	assert.True(t, domain.IsCode(err, domain.CodeUnsafePayload), "got %v", err)
}

func TestOperationLifecycle(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	op := Operation{Status: OperationPending, CreatedAt: t0, UpdatedAt: t0}
	assert.False(t, op.Finished())

	op.Start(t0.Add(time.Second))
	assert.Equal(t, OperationRunning, op.Status)
	assert.Equal(t, t0.Add(time.Second), op.UpdatedAt)
	assert.False(t, op.Finished())

	failed := op
	failed.Fail("the store no longer exists", t0.Add(2*time.Second))
	assert.Equal(t, OperationFailed, failed.Status)
	assert.Equal(t, "the store no longer exists", failed.Error)
	assert.Equal(t, t0.Add(2*time.Second), failed.UpdatedAt)
	assert.True(t, failed.Finished())

	op.Error = "left over"
	op.Succeed(t0.Add(3 * time.Second))
	assert.Equal(t, OperationSucceeded, op.Status)
	assert.Empty(t, op.Error)
	assert.Equal(t, t0.Add(3*time.Second), op.UpdatedAt)
	assert.Equal(t, t0, op.CreatedAt)
	assert.True(t, op.Finished())
}

// The worker's runs of a job it gave up on lead its last error, for
// people to read; its attempts column is what programs read.
func TestJobFailureSaysItsAttempts(t *testing.T) {
	for attempts, want := range map[int]string{
		0: "job failed: platform unavailable",
		1: "job failed: after 1 attempt: platform unavailable",
		6: "job failed: after 6 attempts: platform unavailable",
	} {
		assert.Equal(t, want, JobFailure(attempts, "platform unavailable"))
	}
}
