package memstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/objectstore/memstore"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/objectstoretest"
)

func TestContract(t *testing.T) {
	objectstoretest.Run(t, func(*testing.T) ports.ObjectStore { return memstore.New() })
}

func TestWritesCountObjectsStored(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	require.NoError(t, s.Put(ctx, "a/upload", []byte("1"), "image/png"))
	require.NoError(t, s.Put(ctx, "a/upload", []byte("2"), "image/png"))
	for range 3 {
		_, err := s.PutIfAbsent(ctx, "a/variant", []byte("v"), "image/png")
		require.NoError(t, err)
	}
	assert.Equal(t, 2, s.Writes("a/upload"), "every Put writes")
	assert.Equal(t, 1, s.Writes("a/variant"), "only the creating PutIfAbsent writes")
	assert.Equal(t, 0, s.Writes("a/other"))
	assert.Equal(t, []string{"a/upload", "a/variant"}, s.Keys())
}

func TestFailWith(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	s.FailWith(func(op memstore.Op, _ string) error {
		if op == memstore.OpPutIfAbsent {
			return domain.Errorf(domain.CodeUnavailable, "storage down")
		}
		return nil
	})
	_, err := s.PutIfAbsent(ctx, "a/b", []byte("x"), "image/png")
	assert.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err))
	assert.Equal(t, 0, s.Writes("a/b"))
	require.NoError(t, s.Put(ctx, "a/b", []byte("x"), "image/png"))

	s.FailWith(nil)
	created, err := s.PutIfAbsent(ctx, "a/c", []byte("x"), "image/png")
	require.NoError(t, err)
	assert.True(t, created)
}
