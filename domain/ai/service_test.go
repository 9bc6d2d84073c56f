package ai_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/ai"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestStartWritesAPendingTaskWithAnIdsOnlyEvent(t *testing.T) {
	h := newHarness(t)
	ctx := domain.WithTraceparent(context.Background(), traceparent)
	task, op, msg := h.start(t, ctx, model.AICategory, "prefer kitchen categories")

	assert.Equal(t, model.TaskPending, task.Status)
	assert.Equal(t, h.product.ID, task.ProductID)
	assert.Equal(t, op.ID, task.OperationID)
	assert.Equal(t, model.OperationAITask, op.Kind)
	assert.Equal(t, "ai_task", op.ResourceType)
	assert.Equal(t, task.ID, op.ResourceID)
	assert.Equal(t, model.OperationPending, op.Status)
	assert.Equal(t, traceparent, msg.Traceparent)

	require.NoError(t, model.CheckPayloadSafe(msg.Payload))
	assert.NotContains(t, string(msg.Payload), "kitchen")
	var run model.AITaskRun
	require.NoError(t, json.Unmarshal(msg.Payload, &run))
	assert.Equal(t, model.AITaskRun{TaskID: task.ID, JobOperation: model.JobOperation{OperationID: op.ID}}, run)
	assert.Equal(t, "ai/default", msg.Destination)
	assert.Empty(t, msg.OrderingKey)

	got, err := h.svc.Get(context.Background(), model.Principal{WorkspaceID: h.ws}, task.ID)
	require.NoError(t, err)
	assert.Equal(t, "prefer kitchen categories", got.Instructions)
	_, err = h.svc.Get(context.Background(), model.Principal{WorkspaceID: uuid.New()}, task.ID)
	assert.True(t, domain.IsCode(err, domain.CodeNotFound))
}

func TestStartRefusesBadCommands(t *testing.T) {
	h := newHarness(t)
	other := h.createProduct(t, uuid.New(), "someone else's")
	cases := map[string]struct {
		cmd  ai.StartCommand
		code domain.Code
	}{
		"unknown kind":        {ai.StartCommand{ProductID: h.product.ID, Kind: "video"}, domain.CodeValidation},
		"no product":          {ai.StartCommand{Kind: model.AIText}, domain.CodeValidation},
		"instructions > 2000": {ai.StartCommand{ProductID: h.product.ID, Kind: model.AIText, Instructions: strings.Repeat("é", ai.MaxInstructions+1)}, domain.CodeValidation},
		"not UTF-8":           {ai.StartCommand{ProductID: h.product.ID, Kind: model.AIText, Instructions: "\xff"}, domain.CodeValidation},
		"unknown product":     {ai.StartCommand{ProductID: uuid.New(), Kind: model.AIText}, domain.CodeNotFound},
		"other workspace":     {ai.StartCommand{ProductID: other.ID, Kind: model.AIText}, domain.CodeNotFound},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			err := h.uow.Transact(context.Background(), h.ws, func(ctx context.Context, tx ports.Tx) error {
				_, _, err := h.svc.Start(ctx, tx, model.Principal{WorkspaceID: h.ws}, c.cmd)
				return err
			})
			assert.True(t, domain.IsCode(err, c.code), "want %s: %v", c.code, err)
		})
	}
	// The limit counts characters, not bytes, and is inclusive.
	require.NoError(t, h.uow.Transact(context.Background(), h.ws, func(ctx context.Context, tx ports.Tx) error {
		_, _, err := h.svc.Start(ctx, tx, model.Principal{WorkspaceID: h.ws}, ai.StartCommand{
			ProductID: h.product.ID, Kind: model.AIText, Instructions: strings.Repeat("é", ai.MaxInstructions),
		})
		return err
	}))
}
