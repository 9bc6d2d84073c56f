package s3store_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/s3test"
)

// A pre-signed upload binds the size it was signed for: a body of another
// size, even one whose SHA-256 is the signed one (a client registers 1 byte
// with a large file's digest), is refused by the server, so nothing of it
// stays in the bucket until the upload expires.
func TestPresignedPutBindsTheSize(t *testing.T) {
	srv := s3test.Start(t)
	store := srv.NewStore(t)
	ctx := t.Context()
	body := []byte(strings.Repeat("a large file ", 4096))
	sum := sha256.Sum256(body)

	// put sends body to req as a client would, with the signed headers
	// but the body's own length (net/http sets it from the body).
	put := func(req ports.SignedRequest, body []byte) int {
		t.Helper()
		r, err := http.NewRequestWithContext(ctx, req.Method, req.URL, bytes.NewReader(body))
		require.NoError(t, err)
		for k, v := range req.Headers {
			r.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(r)
		require.NoError(t, err)
		_ = res.Body.Close()
		return res.StatusCode
	}
	exists := func(key string) bool {
		_, err := store.Stat(ctx, key)
		return err == nil
	}

	small, err := store.PresignPut(ctx, "media/small", ports.ObjectInfo{
		Size: 1, ContentType: "image/png", SHA256: hex.EncodeToString(sum[:]),
	}, time.Hour)
	require.NoError(t, err)
	status := put(small, body)
	require.GreaterOrEqual(t, status, 400, "a body larger than signed is refused")
	require.False(t, exists("media/small"), "and not stored")

	exact, err := store.PresignPut(ctx, "media/exact", ports.ObjectInfo{
		Size: int64(len(body)), ContentType: "image/png", SHA256: hex.EncodeToString(sum[:]),
	}, time.Hour)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, put(exact, body), "the size signed is accepted")
	require.True(t, exists("media/exact"))
}
