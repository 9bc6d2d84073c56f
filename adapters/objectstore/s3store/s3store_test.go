package s3store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/objectstore/s3store"
	"github.com/oncehq/once/domain"

	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/objectstoretest"
	"github.com/oncehq/once/testsupport/s3test"
)

// The contract against a real S3 server, a bucket per subtest.
func TestContract(t *testing.T) {
	srv := s3test.Start(t)
	objectstoretest.Run(t, func(t *testing.T) ports.ObjectStore { return srv.NewStore(t) })
}

// Two deployments sharing a bucket under different prefixes see only
// their own objects.
func TestPrefixSeparatesDeployments(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	ctx := context.Background()
	newStore := func(prefix string) *s3store.Store {
		cfg := srv.Config(bucket)
		cfg.Prefix = prefix
		s, err := s3store.New(cfg)
		require.NoError(t, err)
		return s
	}
	a, b := newStore("a/"), newStore("b/")
	require.NoError(t, a.Put(ctx, "media/x", []byte("a's"), "image/png"))
	_, err := b.Stat(ctx, "media/x")
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "%v", err)
	created, err := b.PutIfAbsent(ctx, "media/x", []byte("b's"), "image/png")
	require.NoError(t, err)
	assert.True(t, created)
	data, _, err := a.Get(ctx, "media/x")
	require.NoError(t, err)
	assert.Equal(t, []byte("a's"), data)
}

// A store that cannot be reached is unavailable (worth retrying), and its
// errors name neither the key nor the endpoint.
func TestUnreachableStoreIsUnavailable(t *testing.T) {
	srv := s3test.Start(t)
	s := srv.NewStore(t)
	srv.Stop()
	ctx := context.Background()
	const key = "media/secret-key-name"
	err := s.Put(ctx, key, []byte("x"), "image/png")
	assert.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err), "%v", err)
	_, err = s.Stat(ctx, key)
	assert.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err), "%v", err)
	var de *domain.Error
	require.ErrorAs(t, err, &de)
	assert.NotContains(t, de.Message, key)
	assert.NotContains(t, de.Message, srv.Endpoint)

	srv.Restart(t)
	require.NoError(t, s.Put(ctx, key, []byte("x"), "image/png"), "the same store works once the server is back")
}

func TestConfigIsValidated(t *testing.T) {
	for name, cfg := range map[string]s3store.Config{
		"no endpoint":     {Bucket: "b"},
		"endpoint path":   {Endpoint: "https://s3.example.com/bucket", Bucket: "b"},
		"not http":        {Endpoint: "ftp://s3.example.com", Bucket: "b"},
		"no bucket":       {Endpoint: "https://s3.example.com"},
		"prefix no slash": {Endpoint: "https://s3.example.com", Bucket: "b", Prefix: "once"},
		"prefix dotdot":   {Endpoint: "https://s3.example.com", Bucket: "b", Prefix: "../"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := s3store.New(cfg)
			assert.Equal(t, domain.CodeValidation, domain.ErrorCode(err), "%v", err)
		})
	}
}
