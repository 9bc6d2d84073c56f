package localfs_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/objectstore/localfs"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/objectstoretest"
)

func TestContract(t *testing.T) {
	objectstoretest.Run(t, func(t *testing.T) ports.ObjectStore {
		s, err := localfs.New(t.TempDir())
		require.NoError(t, err)
		return s
	})
}

// Two stores on one root (two processes) still make one object.
func TestPutIfAbsentAcrossStoresOnOneRoot(t *testing.T) {
	root := t.TempDir()
	a, err := localfs.New(root)
	require.NoError(t, err)
	b, err := localfs.New(root)
	require.NoError(t, err)
	ctx := context.Background()
	created, err := a.PutIfAbsent(ctx, "x/y", []byte("a"), "image/png")
	require.NoError(t, err)
	assert.True(t, created)
	created, err = b.PutIfAbsent(ctx, "x/y", []byte("b"), "image/png")
	require.NoError(t, err)
	assert.False(t, created)
	data, _, err := b.Get(ctx, "x/y")
	require.NoError(t, err)
	assert.Equal(t, []byte("a"), data)
}

// Objects stay under the root, and nothing but the object and its sidecar
// is left behind (no temporary files).
func TestLayout(t *testing.T) {
	root := t.TempDir()
	s, err := localfs.New(root)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.Put(ctx, "media/w/i/original", []byte("data"), "image/png"))
	_, err = s.PutIfAbsent(ctx, "media/w/i/thumbnail", []byte("t"), "image/png")
	require.NoError(t, err)

	entries, err := os.ReadDir(filepath.Join(root, "media", "w", "i"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"original", ".original.meta", "thumbnail", ".thumbnail.meta"}, names)
}

// A crash between writing an object and its sidecar leaves a missing or
// stale sidecar; reads answer from the content instead.
func TestStaleOrMissingSidecarIsNotTrusted(t *testing.T) {
	root := t.TempDir()
	s, err := localfs.New(root)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.Put(ctx, "k/o", []byte("old!"), "image/png"))

	// The object replaced, the sidecar not (same size, other content).
	obj := filepath.Join(root, "k", "o")
	require.NoError(t, os.WriteFile(obj, []byte("new!"), 0o600))
	later := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(obj, later, later))
	sum := sha256.Sum256([]byte("new!"))
	want := ports.ObjectInfo{Key: "k/o", Size: 4, ContentType: "application/octet-stream", SHA256: hex.EncodeToString(sum[:])}
	stat, err := s.Stat(ctx, "k/o")
	require.NoError(t, err)
	assert.Equal(t, want, stat)
	_, got, err := s.Get(ctx, "k/o")
	require.NoError(t, err)
	assert.Equal(t, want, got)

	// No sidecar at all.
	require.NoError(t, os.Remove(filepath.Join(root, "k", ".o.meta")))
	stat2, err := s.Stat(ctx, "k/o")
	require.NoError(t, err)
	assert.Equal(t, stat, stat2)
}

func TestNewRefusesAnEmptyRoot(t *testing.T) {
	_, err := localfs.New("")
	assert.Error(t, err)
}

// A file system cannot hold both "a" and "a/b": the second is a conflict,
// never a false "already there".
func TestPrefixConflicts(t *testing.T) {
	s, err := localfs.New(t.TempDir())
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.Put(ctx, "a/b", []byte("x"), "image/png"))

	err = s.Put(ctx, "a", []byte("y"), "image/png")
	assert.Equal(t, domain.CodeConflict, domain.ErrorCode(err), "Put over a directory: %v", err)
	_, err = s.PutIfAbsent(ctx, "a", []byte("y"), "image/png")
	assert.Equal(t, domain.CodeConflict, domain.ErrorCode(err), "PutIfAbsent over a directory: %v", err)
	err = s.Put(ctx, "a/b/c", []byte("y"), "image/png")
	assert.Equal(t, domain.CodeConflict, domain.ErrorCode(err), "Put below an object: %v", err)
	_, err = s.PutIfAbsent(ctx, "a/b/c", []byte("y"), "image/png")
	assert.Equal(t, domain.CodeConflict, domain.ErrorCode(err), "PutIfAbsent below an object: %v", err)
}
