package media_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/media"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestRegisterUploadComplete(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	data := pngBytes(t, 40, 30)

	m, err := h.register(ctx, media.Registration{Filename: " cat.png ", ContentType: "Image/PNG", SizeBytes: int64(len(data))})
	require.NoError(t, err)
	assert.Equal(t, model.MediaAwaitingUpload, m.Status)
	assert.Equal(t, "cat.png", m.Filename)
	assert.Equal(t, "image/png", m.ContentType)
	assert.Equal(t, "media/"+h.p.WorkspaceID.String()+"/"+m.ID.String()+"/original", m.ObjectKey)
	got, err := h.svc.Get(ctx, h.p, m.ID)
	require.NoError(t, err)
	assert.Equal(t, m, got)

	_, err = h.svc.Upload(ctx, h.p, m.ID, "image/png", data)
	require.NoError(t, err)
	stored, info, err := h.store.Get(ctx, m.ObjectKey)
	require.NoError(t, err)
	assert.Equal(t, data, stored)
	assert.Equal(t, "image/png", info.ContentType)

	completed, op, ev, err := h.complete(t, domain.WithTraceparent(ctx, traceparent), m.ID)
	require.NoError(t, err)
	assert.Equal(t, model.MediaProcessing, completed.Status)
	assert.Equal(t, model.OperationMediaProcess, op.Kind)
	assert.Equal(t, model.OperationPending, op.Status)
	assert.Equal(t, "media", op.ResourceType)
	assert.Equal(t, m.ID, op.ResourceID)
	assert.Equal(t, h.p.UserID, op.CreatedBy)

	assert.Equal(t, model.EventMediaProcess, ev.Type)
	assert.Equal(t, "media", ev.AggregateType)
	assert.Equal(t, m.ID, ev.AggregateID)
	assert.Equal(t, h.p.WorkspaceID, ev.WorkspaceID)
	assert.Equal(t, traceparent, ev.Traceparent)
	var payload model.MediaProcess
	require.NoError(t, json.Unmarshal(ev.Payload, &payload))
	assert.Equal(t, model.MediaProcess{MediaID: m.ID, JobOperation: model.JobOperation{OperationID: op.ID}}, payload)

	got, err = h.svc.Get(ctx, h.p, m.ID)
	require.NoError(t, err)
	assert.Equal(t, model.MediaProcessing, got.Status, "committed with the operation and the event")
}

// The event carries ids only: never the object key.
func TestEventPayloadHasNoObjectKey(t *testing.T) {
	h := newHarness(t)
	m, _, msg := h.completed(t, "image/png", pngBytes(t, 8, 8))
	assert.NoError(t, model.CheckPayloadSafe(msg.Payload))
	assert.NotContains(t, string(msg.Payload), m.ObjectKey)
	assert.NotContains(t, string(msg.Payload), "media/")
	var fields map[string]any
	require.NoError(t, json.Unmarshal(msg.Payload, &fields))
	assert.ElementsMatch(t, []string{"media_id", "operation_id"}, keys(fields))
	assert.Empty(t, msg.Destination, "processed in our own object store: nothing outside to pace")
	assert.Empty(t, msg.OrderingKey)
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A second Complete in the same state (a new request, not a replay) is
// refused and writes nothing.
func TestCompleteTwice(t *testing.T) {
	h := newHarness(t)
	m := h.uploaded(t, "image/png", pngBytes(t, 8, 8))
	_, _, _, err := h.complete(t, context.Background(), m.ID)
	require.NoError(t, err)
	_, _, _, err = h.complete(t, context.Background(), m.ID)
	assert.Equal(t, domain.CodeInvalidState, domain.ErrorCode(err), "%v", err)
	assert.Len(t, h.events(t), 1, "one operation, one event")
}

// Two new requests (different idempotency keys) complete one upload at the
// same moment: both transactions are open and both read awaiting_upload
// before either commits. Exactly one wins; the other is refused and writes
// no operation and no event.
func TestCompleteConcurrently(t *testing.T) {
	h := newHarness(t)
	m := h.uploaded(t, "image/png", pngBytes(t, 8, 8))

	var (
		read, attempted sync.WaitGroup
		done            sync.WaitGroup
		errs            [2]error
	)
	read.Add(2)
	attempted.Add(2)
	for i := range errs {
		done.Go(func() {
			errs[i] = h.uow.Transact(context.Background(), h.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
				seen, err := tx.Media().Get(ctx, m.ID)
				read.Done()
				read.Wait() // both have seen the media before either goes on
				if err == nil && seen.Status != model.MediaAwaitingUpload {
					err = fmt.Errorf("transaction %d saw %s", i, seen.Status)
				}
				if err == nil {
					_, _, err = h.svc.Complete(ctx, tx, h.p, m.ID)
				}
				attempted.Done()
				attempted.Wait() // neither commits before both completed
				return err
			})
		})
	}
	done.Wait()

	require.True(t, (errs[0] == nil) != (errs[1] == nil), "exactly one wins: %v, %v", errs[0], errs[1])
	for _, err := range errs {
		if err != nil {
			assert.Equal(t, domain.CodeInvalidState, domain.ErrorCode(err), "%v", err)
		}
	}
	assert.Len(t, h.events(t), 1, "one event")
	var ops []model.Operation
	require.NoError(t, h.uow.Transact(context.Background(), h.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		ops, err = tx.Operations().List(ctx, ports.ListQuery{Kind: model.OperationMediaProcess, Limit: 10})
		return err
	}))
	assert.Len(t, ops, 1, "one operation")
	got, err := h.svc.Get(context.Background(), h.p, m.ID)
	require.NoError(t, err)
	assert.Equal(t, model.MediaProcessing, got.Status)
}

func TestCompleteBeforeUpload(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	m, err := h.register(ctx, media.Registration{Filename: "a.png", ContentType: "image/png", SizeBytes: 10})
	require.NoError(t, err)
	_, _, _, err = h.complete(t, ctx, m.ID)
	assert.Equal(t, domain.CodeInvalidState, domain.ErrorCode(err))
	assert.ErrorContains(t, err, "upload the content first")
	got, err := h.svc.Get(ctx, h.p, m.ID)
	require.NoError(t, err)
	assert.Equal(t, model.MediaAwaitingUpload, got.Status)
	assert.Empty(t, h.events(t))

	_, _, _, err = h.complete(t, ctx, uuid.New())
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err))
}

func TestRegisterValidation(t *testing.T) {
	bad := map[string]media.Registration{
		"no filename":       {Filename: " ", ContentType: "image/png", SizeBytes: 1},
		"long filename":     {Filename: strings.Repeat("a", media.MaxFilenameLength+1), ContentType: "image/png", SizeBytes: 1},
		"control character": {Filename: "a\nb.png", ContentType: "image/png", SizeBytes: 1},
		"gif":               {Filename: "a.gif", ContentType: "image/gif", SizeBytes: 1},
		"parameters":        {Filename: "a.png", ContentType: "image/png; x=y", SizeBytes: 1},
		"empty":             {Filename: "a.png", ContentType: "image/png", SizeBytes: 0},
		"too large":         {Filename: "a.png", ContentType: "image/png", SizeBytes: media.MaxSizeBytes + 1},
	}
	h := newHarness(t)
	for name, r := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := h.register(context.Background(), r)
			assert.Equal(t, domain.CodeValidation, domain.ErrorCode(err), "%v", err)
		})
	}
	_, err := h.register(context.Background(), media.Registration{Filename: "a.jpg", ContentType: "image/jpeg", SizeBytes: media.MaxSizeBytes})
	assert.NoError(t, err, "20 MiB is allowed")
}

func TestUploadChecks(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	data := pngBytes(t, 8, 8)
	m, err := h.register(ctx, media.Registration{Filename: "a.png", ContentType: "image/png", SizeBytes: int64(len(data))})
	require.NoError(t, err)

	_, err = h.svc.Upload(ctx, h.p, m.ID, "image/png", data[:len(data)-1])
	assert.Equal(t, domain.CodeValidation, domain.ErrorCode(err), "wrong size")
	_, err = h.svc.Upload(ctx, h.p, m.ID, "image/jpeg", data)
	assert.Equal(t, domain.CodeValidation, domain.ErrorCode(err), "wrong type")
	assert.Zero(t, h.store.Writes(m.ObjectKey), "refused uploads store nothing")

	other := model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New()}
	_, err = h.svc.Upload(ctx, other, m.ID, "image/png", data)
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "another workspace")
	_, err = h.svc.Upload(ctx, h.p, uuid.New(), "image/png", data)
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err))

	// A retried upload replaces the content until completion, then is refused.
	_, err = h.svc.Upload(ctx, h.p, m.ID, "image/png", data)
	require.NoError(t, err)
	_, err = h.svc.Upload(ctx, h.p, m.ID, "IMAGE/PNG", data)
	require.NoError(t, err)
	assert.Equal(t, 2, h.store.Writes(m.ObjectKey))
	_, _, _, err = h.complete(t, ctx, m.ID)
	require.NoError(t, err)
	_, err = h.svc.Upload(ctx, h.p, m.ID, "image/png", data)
	assert.Equal(t, domain.CodeInvalidState, domain.ErrorCode(err))
	assert.Equal(t, 2, h.store.Writes(m.ObjectKey))
}
