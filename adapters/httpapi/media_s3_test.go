package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/media"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/s3test"
	"github.com/oncehq/once/testsupport/testkit"
)

// With media in S3, registering answers a pre-signed PUT (a replay of the
// registration a freshly signed one, while the saved response keeps the
// API route), curl uploads to it without a byte through the service,
// complete starts the processing, the worker derives the variants from
// the store, a read answers pre-signed downloads of the original and each
// variant, and no signed URL or store key is left in the database or the
// logs (the server's secret scan at the end).
func TestDirectUploadOnS3(t *testing.T) {
	srv := s3test.Start(t)
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	apitest.UseS3(t, &cfg, srv)
	cfg.Dispatcher, cfg.Worker = true, true
	cfg.DispatchPollInterval = 20 * time.Millisecond
	cfg.Queue = app.QueueRedis // the secret scan reads its streams too
	s := apitest.Start(t, cfg, db)

	data := testkit.PNG(t, 300, 200)
	sum := sha256.Sum256(data)
	body := map[string]any{"filename": "mug.png", "content_type": "image/png", "size_bytes": len(data), "sha256": hex.EncodeToString(sum[:])}
	key := map[string]string{"Idempotency-Key": uuid.NewString()}
	res := s.Do(t, http.MethodPost, "/v1/media", body, key)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	var registered httpapi.MediaRegistered
	res.JSON(t, &registered)
	up := registered.Upload
	require.True(t, strings.HasPrefix(up.URL, srv.Endpoint+"/"), "a URL of the store: %s", up.URL)
	assert.Contains(t, up.URL, "X-Amz-Signature=")
	require.NotNil(t, up.ExpiresAt)
	assert.Equal(t, "image/png", up.Headers["Content-Type"])

	replay := s.Do(t, http.MethodPost, "/v1/media", body, key)
	require.Equal(t, http.StatusCreated, replay.Status, "%s", replay.Body)
	var again httpapi.MediaRegistered
	replay.JSON(t, &again)
	assert.Equal(t, registered.Media.ID, again.Media.ID)
	assert.Contains(t, again.Upload.URL, "X-Amz-Signature=", "a replay answers a signed URL, not the saved route")

	noDigest := s.Do(t, http.MethodPost, "/v1/media", map[string]any{"filename": "mug.png", "content_type": "image/png", "size_bytes": len(data)},
		map[string]string{"Idempotency-Key": uuid.NewString()})
	assert.Equal(t, http.StatusUnprocessableEntity, noDigest.Status, "%s", noDigest.Body)

	require.Equal(t, "200", s3test.Curl(t, up.Method, up.URL, up.Headers, data))

	id := registered.Media.ID.String()
	done := s.Do(t, http.MethodPost, "/v1/media/"+id+"/complete", nil, map[string]string{"Idempotency-Key": uuid.NewString()})
	require.Equal(t, http.StatusAccepted, done.Status, "%s", done.Body)
	read := s.Do(t, http.MethodGet, "/v1/media/"+id, nil, nil)
	require.Equal(t, http.StatusOK, read.Status, "%s", read.Body)
	var m httpapi.Media
	read.JSON(t, &m)
	assert.Nil(t, m.Upload, "no upload once completed")

	var completed httpapi.MediaCompleted
	done.JSON(t, &completed)
	op := s.WaitOperation(t, completed.Operation.ID, 30*time.Second)
	require.Equal(t, "succeeded", op.Status, "%+v", op)
	read = s.Do(t, http.MethodGet, "/v1/media/"+id, nil, nil)
	require.Equal(t, http.StatusOK, read.Status, "%s", read.Body)
	m = httpapi.Media{}
	read.JSON(t, &m)
	require.Equal(t, "ready", m.Status)
	require.Len(t, m.Variants, 2)
	require.Len(t, m.Downloads, 3, "the original and each variant: %+v", m.Downloads)
	for name, d := range m.Downloads {
		resp, err := http.Get(d.URL)
		require.NoError(t, err)
		got, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "download of %s", name)
		_, format, err := image.DecodeConfig(bytes.NewReader(got))
		require.NoError(t, err, "download of %s", name)
		assert.Equal(t, "png", format, "download of %s", name)
	}
	assert.Equal(t, data, mustGet(t, m.Downloads["original"].URL), "the original is the uploaded file")
}

func mustGet(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return body
}

// With a short ONCE_MEDIA_UPLOAD_EXPIRY (its floor, on a manual clock),
// media registered and never completed are gone after it, through the
// maintenance of the process: one never uploaded and one uploaded with
// curl and not completed answer 404 NOT_FOUND, the uploaded object is
// gone from the S3 server, and the draft naming them names neither.
func TestUploadNeverCompletedIsGoneOnS3(t *testing.T) {
	srv := s3test.Start(t)
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	bucket := apitest.UseS3(t, &cfg, srv)
	cfg.MediaUploadExpiry, cfg.CleanupInterval = 2*time.Hour, 20*time.Millisecond
	cfg.TokenTTL = 72 * time.Hour // the clock jumps past the expiry
	clock := apitest.NewManualClock()
	s := apitest.Start(t, cfg, db, apitest.WithClock(clock))

	data := []byte("\x89PNG\r\n\x1a\n never completed")
	uploaded := s.UploadDirect(t, data).Media.ID
	sum := sha256.Sum256(data)
	res := s.Do(t, http.MethodPost, "/v1/media",
		map[string]any{"filename": "p.png", "content_type": "image/png", "size_bytes": len(data), "sha256": hex.EncodeToString(sum[:])},
		map[string]string{"Idempotency-Key": uuid.NewString()})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	var registered httpapi.MediaRegistered
	res.JSON(t, &registered)
	neverUploaded := registered.Media.ID
	res = s.Do(t, http.MethodPost, "/v1/products",
		map[string]any{"title": "Mug", "price_minor": 1299, "currency": "EUR", "media_ids": []uuid.UUID{neverUploaded, uploaded}}, nil)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	var draft httpapi.Product
	res.JSON(t, &draft)

	read := func(id uuid.UUID) apitest.Response {
		return s.Do(t, http.MethodGet, "/v1/media/"+id.String(), nil, nil)
	}
	for _, id := range []uuid.UUID{uploaded, neverUploaded} {
		require.Equal(t, http.StatusOK, read(id).Status)
	}
	store := srv.StoreOn(t, bucket)
	_, err := store.Stat(context.Background(), media.ObjectKey(s.Workspace, uploaded))
	require.NoError(t, err, "the upload reached the store")

	clock.Advance(2*time.Hour + time.Minute)
	apitest.Eventually(t, 20*time.Second, "the expired uploads gone", func() bool {
		return read(uploaded).Status == http.StatusNotFound && read(neverUploaded).Status == http.StatusNotFound
	})
	for _, id := range []uuid.UUID{uploaded, neverUploaded} {
		assert.Equal(t, "NOT_FOUND", read(id).Problem(t).Code)
		_, err = store.Stat(context.Background(), media.ObjectKey(s.Workspace, id))
		assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "the object is gone: %v", err)
	}
	var got httpapi.Product
	s.Do(t, http.MethodGet, "/v1/products/"+draft.ID.String(), nil, nil).JSON(t, &got)
	assert.Empty(t, got.MediaIDs, "the draft forgets the media that are gone")
	assert.Greater(t, got.Revision, draft.Revision, "and its editor is told it changed")
}
