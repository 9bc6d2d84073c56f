package media_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"log/slog"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/objectstore/memstore"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain/media"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

type harness struct {
	uow   ports.UnitOfWork
	store *memstore.Store
	svc   *media.Service
	p     model.Principal
	logs  *testkit.LogBuffer
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	uow := memory.NewUnitOfWork(memory.NewDB())
	store := memstore.New()
	return &harness{
		uow:   uow,
		store: store,
		svc:   media.NewService(uow, store, system.NewClock(), system.NewIDs()),
		p:     model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New(), Role: model.RoleAdmin},
		logs:  &testkit.LogBuffer{},
	}
}

// handler builds a worker on uow (h.uow when nil), logging into h.logs.
func (h *harness) handler(uow ports.UnitOfWork) *media.ProcessHandler {
	if uow == nil {
		uow = h.uow
	}
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return media.NewProcessHandler(uow, h.store, system.NewClock(), log)
}

// uploaded registers and uploads data as contentType, ready to complete.
func (h *harness) uploaded(t *testing.T, contentType string, data []byte) model.Media {
	t.Helper()
	ctx := context.Background()
	m, err := h.register(ctx, media.Registration{Filename: "photo", ContentType: contentType, SizeBytes: int64(len(data))})
	require.NoError(t, err)
	_, err = h.svc.Upload(ctx, h.p, m.ID, contentType, data)
	require.NoError(t, err)
	return m
}

// complete runs Complete in its own transaction, as the HTTP adapter does
// inside its idempotent one, and returns the event it appended.
func (h *harness) complete(t *testing.T, ctx context.Context, id uuid.UUID) (model.Media, model.Operation, model.OutboxEvent, error) {
	t.Helper()
	var (
		m   model.Media
		op  model.Operation
		evs []model.OutboxEvent
	)
	err := h.uow.Transact(ctx, h.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		if m, op, err = h.svc.Complete(ctx, tx, h.p, id); err != nil {
			return err
		}
		evs, err = tx.Outbox().List(ctx, model.OutboxPending, 100)
		return err
	})
	var ev model.OutboxEvent
	for _, e := range evs {
		if e.AggregateID == id {
			ev = e
		}
	}
	return m, op, ev, err
}

// completed uploads data, completes it, and returns the media and the
// message the Dispatcher would publish.
func (h *harness) completed(t *testing.T, contentType string, data []byte) (model.Media, model.Operation, ports.Message) {
	t.Helper()
	m := h.uploaded(t, contentType, data)
	m, op, ev, err := h.complete(t, context.Background(), m.ID)
	require.NoError(t, err)
	require.Equal(t, model.EventMediaProcess, ev.Type)
	return m, op, ports.MessageOf(ev)
}

func (h *harness) state(t *testing.T, mediaID, opID uuid.UUID) (model.Media, model.Operation) {
	t.Helper()
	var m model.Media
	var op model.Operation
	require.NoError(t, h.uow.Transact(context.Background(), h.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		if m, err = tx.Media().Get(ctx, mediaID); err != nil {
			return err
		}
		op, err = tx.Operations().Get(ctx, opID)
		return err
	}))
	return m, op
}

func (h *harness) events(t *testing.T) []model.OutboxEvent {
	t.Helper()
	var evs []model.OutboxEvent
	require.NoError(t, h.uow.Transact(context.Background(), h.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		evs, err = tx.Outbox().List(ctx, "", 100)
		return err
	}))
	return evs
}

// testImage is a w x h gradient with some alpha, so scaling has work to do.
func testImage(w, h int) image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, color.NRGBA{R: uint8(x * 255 / w), G: uint8(y * 255 / h), B: 128, A: 255 - uint8(x%2)})
		}
	}
	return img
}

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, testImage(w, h)))
	return buf.Bytes()
}

func jpegBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, jpeg.Encode(&buf, testImage(w, h), &jpeg.Options{Quality: 90}))
	return buf.Bytes()
}

// register runs Register in its own transaction, as the idempotent endpoint
// runs it in the request's.
func (h *harness) register(ctx context.Context, r media.Registration) (model.Media, error) {
	var m model.Media
	err := h.uow.Transact(ctx, h.p.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		var err error
		m, err = h.svc.Register(ctx, tx, h.p, r)
		return err
	})
	return m, err
}
