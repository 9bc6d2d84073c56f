package apitest

import (
	"testing"

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
