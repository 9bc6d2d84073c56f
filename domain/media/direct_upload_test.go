package media_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/media"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/s3test"
	"github.com/oncehq/once/testsupport/testkit"
)

// s3Harness is the media service on a real S3 server: uploads go straight
// to the store with the URL the service signs.
func s3Harness(t *testing.T) (*harness, ports.ObjectStore) {
	t.Helper()
	h, store, _ := s3HarnessWithServer(t, system.NewClock())
	return h, store
}

// s3HarnessWithServer is s3Harness on clock, with the server (to stop it).
func s3HarnessWithServer(t *testing.T, clock ports.Clock) (*harness, ports.ObjectStore, *s3test.Server) {
	t.Helper()
	srv := s3test.Start(t)
	store := srv.NewStore(t)
	uow := memory.NewUnitOfWork(memory.NewDB())
	h := &harness{
		uow:  uow,
		svc:  media.NewService(uow, store, clock, system.NewIDs()),
		p:    model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New(), Role: model.RoleAdmin},
		logs: &testkit.LogBuffer{},
	}
	return h, store, srv
}

func hexSHA256(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// curlPut sends data to the signed request with curl and returns the
// HTTP status.
func curlPut(t *testing.T, req ports.SignedRequest, data []byte) string {
	return s3test.Curl(t, req.Method, req.URL, req.Headers, data)
}

// A client uploads with curl to the URL registering answered (no byte
// passes through the service), completes, and the worker derives the
// variants from the store; they are readable through pre-signed GETs.
func TestDirectUploadToS3(t *testing.T) {
	h, store := s3Harness(t)
	ctx := context.Background()
	data := pngBytes(t, 600, 450)

	_, err := h.register(ctx, media.Registration{Filename: "p.png", ContentType: "image/png", SizeBytes: int64(len(data))})
	assert.Equal(t, domain.CodeValidation, domain.ErrorCode(err), "a direct upload needs the digest: %v", err)

	m, err := h.register(ctx, media.Registration{Filename: "p.png", ContentType: "image/png", SizeBytes: int64(len(data)), SHA256: hexSHA256(data)})
	require.NoError(t, err)
	require.True(t, h.svc.DirectUploads())
	put, ok, err := h.svc.UploadURL(ctx, m)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, http.MethodPut, put.Method)

	other := pngBytes(t, 600, 451)
	assert.NotEqual(t, "200", curlPut(t, put, other[:len(data)]), "the store refuses bytes that are not the signed digest")
	_, _, _, err = h.complete(t, ctx, m.ID)
	assert.Equal(t, domain.CodeInvalidState, domain.ErrorCode(err), "nothing was stored: %v", err)

	require.Equal(t, "200", curlPut(t, put, data))
	m, op, ev, err := h.complete(t, ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, model.EventMediaProcess, ev.Type)

	require.NoError(t, s3Handler(h, store).Handle(ctx, ports.MessageOf(ev)))
	got, o := h.state(t, m.ID, op.ID)
	require.Equal(t, model.MediaReady, got.Status, "reason: %s", got.Reason)
	assert.Equal(t, model.OperationSucceeded, o.Status)

	urls, ok, err := h.svc.DownloadURLs(ctx, got)
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, urls, 1+len(model.MediaVariantNames))
	for name, req := range urls {
		resp, err := http.Get(req.URL)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "download of %s", name)
		assert.Equal(t, "image/png", resp.Header.Get("Content-Type"), "download of %s", name)
	}
	assert.NotContains(t, h.logs.String(), "X-Amz-Signature", "signed URLs stay out of logs")
}

// Completing refuses an object that is not the registered size, type or
// digest with UPLOAD_MISMATCH, and starts no job. (A signed upload cannot
// send other bytes; an object written there some other way can.)
func TestCompleteRefusesAnObjectThatIsNotTheRegisteredOne(t *testing.T) {
	data := pngBytes(t, 64, 64)
	for name, wrong := range map[string]func(ctx context.Context, s ports.ObjectStore, key string) error{
		"size": func(ctx context.Context, s ports.ObjectStore, key string) error {
			return s.Put(ctx, key, append(bytes.Clone(data), 0), "image/png")
		},
		"type": func(ctx context.Context, s ports.ObjectStore, key string) error {
			return s.Put(ctx, key, data, "image/jpeg")
		},
		"checksum": func(ctx context.Context, s ports.ObjectStore, key string) error {
			other := bytes.Clone(data)
			other[len(other)-1] ^= 0xff
			return s.Put(ctx, key, other, "image/png")
		},
	} {
		t.Run(name, func(t *testing.T) {
			h, store := s3Harness(t)
			ctx := context.Background()
			m, err := h.register(ctx, media.Registration{Filename: "p.png", ContentType: "image/png", SizeBytes: int64(len(data)), SHA256: hexSHA256(data)})
			require.NoError(t, err)
			require.NoError(t, wrong(ctx, store, m.ObjectKey))
			_, _, _, err = h.complete(t, ctx, m.ID)
			assert.Equal(t, domain.CodeUploadMismatch, domain.ErrorCode(err), "%v", err)
			assert.Empty(t, h.events(t), "no job")
			got, err := h.svc.Get(ctx, h.p, m.ID)
			require.NoError(t, err)
			assert.Equal(t, model.MediaAwaitingUpload, got.Status, "the client may upload again")
		})
	}
}

func s3Handler(h *harness, store ports.ObjectStore) *media.ProcessHandler {
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return media.NewProcessHandler(h.uow, store, system.NewClock(), log)
}

// The S3 server down during a derivation: the job fails as unavailable
// (the worker retries it) and leaves the media processing; once the
// server is back the same message makes the media ready, each variant one
// object.
func TestS3OutageDuringDerivationIsRetried(t *testing.T) {
	h, store, srv := s3HarnessWithServer(t, system.NewClock())
	ctx := context.Background()
	data := pngBytes(t, 300, 300)
	m, err := h.register(ctx, media.Registration{Filename: "p.png", ContentType: "image/png", SizeBytes: int64(len(data)), SHA256: hexSHA256(data)})
	require.NoError(t, err)
	put, _, err := h.svc.UploadURL(ctx, m)
	require.NoError(t, err)
	require.Equal(t, "200", curlPut(t, put, data))
	m, op, ev, err := h.complete(t, ctx, m.ID)
	require.NoError(t, err)
	msg := ports.MessageOf(ev)

	srv.Stop()
	err = s3Handler(h, store).Handle(ctx, msg)
	assert.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err), "%v", err)
	got, o := h.state(t, m.ID, op.ID)
	assert.Equal(t, model.MediaProcessing, got.Status)
	assert.Equal(t, model.OperationRunning, o.Status)

	srv.Restart(t)
	handler := s3Handler(h, store)
	require.NoError(t, handler.Handle(ctx, msg))
	require.NoError(t, handler.Handle(ctx, msg), "a redelivery after success changes nothing")
	got, o = h.state(t, m.ID, op.ID)
	require.Equal(t, model.MediaReady, got.Status, "reason: %s", got.Reason)
	assert.Equal(t, model.OperationSucceeded, o.Status)
	for _, v := range got.Variants {
		_, info, err := store.Get(ctx, v.ObjectKey)
		require.NoError(t, err)
		assert.Equal(t, v.SizeBytes, info.Size, "variant %s as recorded", v.Name)
	}
	assert.NotContains(t, h.logs.String(), "X-Amz-Signature", "signed URLs stay out of logs")
}

// Completing an object the store keeps no SHA-256 checksum of (written
// there by some other client than a signed upload) is UPLOAD_MISMATCH,
// the client's to fix by uploading again, not a 500: the digest cannot be
// checked, so it does not match.
func TestCompleteRefusesAnObjectWithoutAChecksum(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	store := srv.StoreOn(t, bucket)
	h := &harness{
		uow: memory.NewUnitOfWork(memory.NewDB()), p: model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New(), Role: model.RoleAdmin},
		logs: &testkit.LogBuffer{},
	}
	h.svc = media.NewService(h.uow, store, system.NewClock(), system.NewIDs())
	ctx := context.Background()
	data := pngBytes(t, 64, 64)
	m, err := h.register(ctx, media.Registration{Filename: "p.png", ContentType: "image/png", SizeBytes: int64(len(data)), SHA256: hexSHA256(data)})
	require.NoError(t, err)
	srv.PutWithoutChecksum(t, bucket, m.ObjectKey, data, "image/png")
	_, _, _, err = h.complete(t, ctx, m.ID)
	assert.Equal(t, domain.CodeUploadMismatch, domain.ErrorCode(err), "%v", err)
	assert.Empty(t, h.events(t), "no job")
}
