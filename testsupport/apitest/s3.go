package apitest

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/testsupport/s3test"
)

// UseS3 points cfg's object store at a new bucket of srv and returns the
// bucket. The credentials go into the environment (for the test, and for
// the `once` processes it starts), where the S3 adapter reads them as it
// does in production.
func UseS3(t *testing.T, cfg *app.Config, srv *s3test.Server) string {
	t.Helper()
	bucket := srv.NewBucket(t)
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	cfg.ObjectStore, cfg.S3Endpoint, cfg.S3Bucket, cfg.S3PathStyle, cfg.S3Region = app.ObjectStoreS3, srv.Endpoint, bucket, true, s3test.Region
	return bucket
}

// UploadDirect registers data as a PNG with its SHA-256 and uploads it
// with curl to the pre-signed URL the registration answered, as a client
// of a service on S3 does (no byte through the service). It returns the
// registration.
func (s *Server) UploadDirect(t *testing.T, data []byte) httpapi.MediaRegistered {
	t.Helper()
	sum := sha256.Sum256(data)
	res := s.Do(t, http.MethodPost, "/v1/media",
		map[string]any{"filename": "p.png", "content_type": "image/png", "size_bytes": len(data), "sha256": hex.EncodeToString(sum[:])},
		map[string]string{"Idempotency-Key": uuid.NewString()})
	if res.Status != http.StatusCreated {
		t.Fatalf("registerMedia: %d %s", res.Status, res.Body)
	}
	var reg httpapi.MediaRegistered
	res.JSON(t, &reg)
	up := reg.Upload
	if status := s3test.Curl(t, up.Method, up.URL, up.Headers, data); status != "200" {
		t.Fatalf("upload to the pre-signed URL: %s", status)
	}
	return reg
}
