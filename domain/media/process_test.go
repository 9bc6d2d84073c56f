package media_test

import (
	"bytes"
	"context"
	"hash/crc32"
	"image"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/objectstore/memstore"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/media"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

// variantBoxes mirrors the sizes the worker promises.
var variantBoxes = map[string]int{"thumbnail": 128, "medium": 512}

// requireReady checks media is ready with one variant per name, each
// stored once under its deterministic key, scaled to fit its box with the
// original's aspect ratio, and encoded as format.
func requireReady(t *testing.T, h *harness, m model.Media, op model.Operation, w, hgt int, format string) {
	t.Helper()
	got, o := h.state(t, m.ID, op.ID)
	require.Equal(t, model.MediaReady, got.Status, "reason: %s", got.Reason)
	assert.Empty(t, got.Reason)
	assert.Equal(t, model.OperationSucceeded, o.Status)
	assert.Empty(t, o.Error)
	require.Len(t, got.Variants, len(model.MediaVariantNames))
	for i, name := range model.MediaVariantNames {
		v := got.Variants[i]
		assert.Equal(t, name, v.Name)
		assert.Equal(t, media.VariantKey(h.p.WorkspaceID, m.ID, name), v.ObjectKey)
		assert.Equal(t, 1, h.store.Writes(v.ObjectKey), "variant %s written once", name)
		data, info, err := h.store.Get(context.Background(), v.ObjectKey)
		require.NoError(t, err)
		assert.Equal(t, int64(len(data)), v.SizeBytes)
		assert.Equal(t, m.ContentType, info.ContentType)
		cfg, f, err := image.DecodeConfig(bytes.NewReader(data))
		require.NoError(t, err)
		assert.Equal(t, format, f)
		box, ok := variantBoxes[name]
		require.True(t, ok, "variant %s has a known box", name)
		assert.LessOrEqual(t, cfg.Width, box)
		assert.LessOrEqual(t, cfg.Height, box)
		if w > box || hgt > box {
			assert.Equal(t, box, max(cfg.Width, cfg.Height), "scaled to the box")
			assert.InDelta(t, float64(w)/float64(hgt), float64(cfg.Width)/float64(cfg.Height), 0.02, "aspect kept")
		} else {
			assert.Equal(t, [2]int{w, hgt}, [2]int{cfg.Width, cfg.Height}, "never enlarged")
		}
	}
}

// The same message delivered twice derives once: each variant is written
// once and the media is ready.
func TestDuplicateDeliveryDerivesOnce(t *testing.T) {
	h := newHarness(t)
	m, op, msg := h.completed(t, "image/png", pngBytes(t, 600, 450))
	handler := h.handler(nil)

	require.NoError(t, handler.Handle(context.Background(), msg))
	require.NoError(t, handler.Handle(context.Background(), msg))

	requireReady(t, h, m, op, 600, 450, "png")
	assert.Len(t, h.store.Keys(), 1+len(model.MediaVariantNames), "the original and one object per variant")
	assert.NotContains(t, h.logs.String(), m.ObjectKey, "object keys stay out of logs")
}

func TestJPEGVariantsAreJPEG(t *testing.T) {
	h := newHarness(t)
	m, op, msg := h.completed(t, "image/jpeg", jpegBytes(t, 300, 600))
	require.NoError(t, h.handler(nil).Handle(context.Background(), msg))
	requireReady(t, h, m, op, 300, 600, "jpeg")
}

func TestSmallImagesAreNotEnlarged(t *testing.T) {
	h := newHarness(t)
	m, op, msg := h.completed(t, "image/png", pngBytes(t, 200, 50))
	require.NoError(t, h.handler(nil).Handle(context.Background(), msg))
	got, _ := h.state(t, m.ID, op.ID)
	requireReady(t, h, m, op, 200, 50, "png")
	_, thumb, err := h.store.Get(context.Background(), got.Variants[0].ObjectKey)
	require.NoError(t, err)
	assert.NotZero(t, thumb.Size)
}

// Concurrent deliveries (two workers got the same message) still write one
// object per variant.
func TestConcurrentDeliveriesDeriveOnce(t *testing.T) {
	h := newHarness(t)
	m, op, msg := h.completed(t, "image/png", pngBytes(t, 520, 400))
	handler := h.handler(nil)
	done := make(chan error, 4)
	for range 4 {
		go func() { done <- handler.Handle(context.Background(), msg) }()
	}
	for range 4 {
		assert.NoError(t, <-done)
	}
	requireReady(t, h, m, op, 520, 400, "png")
}

// The worker died after writing the variants and before recording them:
// the redelivery finds the objects, writes nothing new, and records.
func TestCrashAfterWritingVariants(t *testing.T) {
	h := newHarness(t)
	m, op, msg := h.completed(t, "image/png", pngBytes(t, 640, 480))
	// Transaction 1 marks the operation running; 2 records the outcome.
	crashing := testkit.NewCrashingUoW(h.uow)
	crashing.CrashNext(2)
	handler := h.handler(crashing)

	err := handler.Handle(context.Background(), msg)
	require.Error(t, err)
	assert.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err), "the message is delivered again")
	got, o := h.state(t, m.ID, op.ID)
	assert.Equal(t, model.MediaProcessing, got.Status)
	assert.Empty(t, got.Variants)
	assert.Equal(t, model.OperationRunning, o.Status)
	for _, name := range model.MediaVariantNames {
		assert.Equal(t, 1, h.store.Writes(media.VariantKey(h.p.WorkspaceID, m.ID, name)), "written before the crash")
	}

	require.NoError(t, handler.Handle(context.Background(), msg))
	requireReady(t, h, m, op, 640, 480, "png")
}

// Storage down: the handler returns the error and the operation stays
// running; the redelivery finishes the work.
func TestUnavailableStorageIsRetried(t *testing.T) {
	for _, op := range []memstore.Op{memstore.OpGet, memstore.OpPutIfAbsent} {
		t.Run(string(op), func(t *testing.T) {
			h := newHarness(t)
			m, o, msg := h.completed(t, "image/png", pngBytes(t, 300, 300))
			h.store.FailWith(func(got memstore.Op, _ string) error {
				if got == op {
					return domain.Errorf(domain.CodeUnavailable, "storage down")
				}
				return nil
			})
			err := h.handler(nil).Handle(context.Background(), msg)
			assert.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err))
			got, state := h.state(t, m.ID, o.ID)
			assert.Equal(t, model.MediaProcessing, got.Status)
			assert.Equal(t, model.OperationRunning, state.Status)

			h.store.FailWith(nil)
			require.NoError(t, h.handler(nil).Handle(context.Background(), msg))
			requireReady(t, h, m, o, 300, 300, "png")
		})
	}
}

func TestInvalidContentIsRejected(t *testing.T) {
	png := pngBytes(t, 64, 64)
	cases := map[string]struct {
		contentType string
		data        []byte
		reason      string
	}{
		"not an image":     {"image/png", []byte("this is a text file, not a picture"), media.ReasonNotAnImage},
		"PNG sent as JPEG": {"image/jpeg", png, media.ReasonTypeMismatch},
		"JPEG sent as PNG": {"image/png", jpegBytes(t, 16, 16), media.ReasonTypeMismatch},
		"truncated PNG":    {"image/png", png[:len(png)-20], "the image cannot be decoded"},
		"huge dimensions":  {"image/png", hugePNGHeader(t), media.ReasonTooManyPixels},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			m, op, msg := h.completed(t, c.contentType, c.data)
			handler := h.handler(nil)
			require.NoError(t, handler.Handle(context.Background(), msg), "a verdict, not an error")
			require.NoError(t, handler.Handle(context.Background(), msg))

			got, o := h.state(t, m.ID, op.ID)
			assert.Equal(t, model.MediaRejected, got.Status)
			assert.True(t, strings.HasPrefix(got.Reason, c.reason), "reason %q", got.Reason)
			assert.Empty(t, got.Variants)
			assert.Equal(t, model.OperationFailed, o.Status)
			assert.Equal(t, got.Reason, o.Error)
			assert.NotContains(t, o.Error, m.ObjectKey)
			assert.Equal(t, []string{m.ObjectKey}, h.store.Keys(), "no variant written")
		})
	}
}

// hugePNGHeader is a valid PNG signature and header announcing 20000 x
// 20000 pixels, followed by nothing: the worker must refuse it before
// allocating the image.
func hugePNGHeader(t *testing.T) []byte {
	t.Helper()
	small := pngBytes(t, 1, 1)
	// Signature (8) + IHDR length/type (8) + width, height (8) + rest of
	// IHDR (5) + CRC (4). The CRC is recomputed by hand below.
	out := append([]byte(nil), small[:33]...)
	put := func(at int, v uint32) {
		out[at], out[at+1], out[at+2], out[at+3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	}
	put(16, 20000)
	put(20, 20000)
	put(29, crc32.ChecksumIEEE(out[12:29]))
	return out
}

func TestContentRemovedFromStorageIsRejected(t *testing.T) {
	h := newHarness(t)
	m, op, msg := h.completed(t, "image/png", pngBytes(t, 10, 10))
	h.store.FailWith(func(got memstore.Op, _ string) error {
		if got == memstore.OpGet {
			return domain.Errorf(domain.CodeNotFound, "object not found")
		}
		return nil
	})
	require.NoError(t, h.handler(nil).Handle(context.Background(), msg))
	got, o := h.state(t, m.ID, op.ID)
	assert.Equal(t, model.MediaRejected, got.Status)
	assert.Equal(t, media.ReasonContentMissing, got.Reason)
	assert.Equal(t, model.OperationFailed, o.Status)
}

func TestMessagesThatCanNeverSucceed(t *testing.T) {
	h := newHarness(t)
	_, op, msg := h.completed(t, "image/png", pngBytes(t, 10, 10))
	handler := h.handler(nil)
	bad := map[string]ports.Message{
		"other type":      {ID: msg.ID, Type: model.EventStoreCredentialsVerify, WorkspaceID: msg.WorkspaceID, Payload: msg.Payload},
		"no workspace":    {ID: msg.ID, Type: msg.Type, Payload: msg.Payload},
		"not JSON":        {ID: msg.ID, Type: msg.Type, WorkspaceID: msg.WorkspaceID, Payload: []byte("{")},
		"unknown field":   {ID: msg.ID, Type: msg.Type, WorkspaceID: msg.WorkspaceID, Payload: []byte(`{"media_id":"` + uuid.NewString() + `","operation_id":"` + op.ID.String() + `","object_key":"x"}`)},
		"missing ids":     {ID: msg.ID, Type: msg.Type, WorkspaceID: msg.WorkspaceID, Payload: []byte(`{}`)},
		"other media":     {ID: msg.ID, Type: msg.Type, WorkspaceID: msg.WorkspaceID, Payload: []byte(`{"media_id":"` + uuid.NewString() + `","operation_id":"` + op.ID.String() + `"}`)},
		"other workspace": {ID: msg.ID, Type: msg.Type, WorkspaceID: uuid.New(), Payload: msg.Payload},
	}
	for name, m := range bad {
		t.Run(name, func(t *testing.T) {
			err := handler.Handle(context.Background(), m)
			require.Error(t, err)
			code := domain.ErrorCode(err)
			assert.True(t, code == domain.CodeValidation || code == domain.CodeNotFound, "code %s", code)
		})
	}
	assert.Len(t, h.store.Keys(), 1, "nothing derived")
}
