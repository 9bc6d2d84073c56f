package materials_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/materials"
	"github.com/oncehq/once/ports"
)

const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestStartWritesAPendingTransferWithAnIdsOnlyEvent(t *testing.T) {
	h := newHarness(t)
	sources := urls(3)
	ctx := domain.WithTraceparent(context.Background(), traceparent)
	tr, op, msg := h.start(t, ctx, sources)

	assert.Equal(t, domain.TaskPending, tr.Status)
	assert.Equal(t, op.ID, tr.OperationID)
	assert.Equal(t, domain.OperationMaterialTransfer, op.Kind)
	assert.Equal(t, domain.OperationPending, op.Status)
	assert.Equal(t, materials.ResourceType, op.ResourceType)
	assert.Equal(t, tr.ID, op.ResourceID)
	assert.Equal(t, traceparent, msg.Traceparent)

	require.NoError(t, domain.CheckPayloadSafe(msg.Payload))
	for _, u := range sources {
		assert.NotContains(t, string(msg.Payload), u)
	}
	assert.NotContains(t, string(msg.Payload), "cdn.example.com")
	assert.NotContains(t, string(msg.Payload), signature)
	var run domain.MaterialTransferRun
	require.NoError(t, json.Unmarshal(msg.Payload, &run))
	assert.Equal(t, domain.MaterialTransferRun{TransferID: tr.ID, OperationID: op.ID}, run)

	got, err := h.svc.Get(context.Background(), domain.Principal{WorkspaceID: h.ws}, tr.ID)
	require.NoError(t, err)
	require.Len(t, got.Items, 3)
	for i, it := range got.Items {
		assert.Equal(t, i, it.Index)
		assert.Equal(t, sources[i], it.SourceURL, "the URL stays in the database")
		assert.False(t, it.Done)
	}

	_, err = h.svc.Get(context.Background(), domain.Principal{WorkspaceID: uuid.New()}, tr.ID)
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "another workspace: %v", err)
}

func TestStartRefusesBadSourcesWithoutEchoingThem(t *testing.T) {
	h := newHarness(t)
	long := "https://cdn.example.com/" + strings.Repeat("a", materials.MaxURLLength-len("https://cdn.example.com/")+1)
	cases := map[string][]string{
		"none":        nil,
		"too many":    urls(materials.MaxItems + 1),
		"ftp":         {"ftp://cdn.example.com/a.jpg?" + signature},
		"relative":    {"/a.jpg?" + signature},
		"no host":     {"https:///a.jpg?" + signature},
		"not a URL":   {"https://cdn example.com/%zz?" + signature},
		"opaque":      {"https:cdn.example.com?" + signature},
		"too long":    {long},
		"one bad one": append(urls(2), "javascript:alert(1)//"+signature),
	}
	for name, sources := range cases {
		t.Run(name, func(t *testing.T) {
			err := h.uow.Transact(context.Background(), h.ws, func(ctx context.Context, tx ports.Tx) error {
				_, _, err := h.svc.Start(ctx, tx, domain.Principal{WorkspaceID: h.ws, UserID: uuid.New()}, sources)
				return err
			})
			require.True(t, domain.IsCode(err, domain.CodeValidation), "%v", err)
			assert.NotContains(t, err.Error(), signature)
			assert.NotContains(t, err.Error(), "cdn")
		})
	}
	// Limits are inclusive.
	exact := "https://cdn.example.com/" + strings.Repeat("a", materials.MaxURLLength-len("https://cdn.example.com/"))
	require.NoError(t, h.uow.Transact(context.Background(), h.ws, func(ctx context.Context, tx ports.Tx) error {
		_, _, err := h.svc.Start(ctx, tx, domain.Principal{WorkspaceID: h.ws}, append(urls(materials.MaxItems-1), exact))
		return err
	}))
}
