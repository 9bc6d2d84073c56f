// Package objectstoretest is the contract every ports.ObjectStore adapter
// passes. An adapter's test calls Run with a constructor of empty stores.
package objectstoretest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// Run runs the contract against stores made by newStore; each subtest gets
// a new, empty store.
func Run(t *testing.T, newStore func(t *testing.T) ports.ObjectStore) {
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, newStore(t)) })
	t.Run("PutReplaces", func(t *testing.T) { testPutReplaces(t, newStore(t)) })
	t.Run("PutIfAbsentKeepsTheFirst", func(t *testing.T) { testPutIfAbsentKeepsTheFirst(t, newStore(t)) })
	t.Run("ConcurrentPutIfAbsentCreatesOnce", func(t *testing.T) { testConcurrentPutIfAbsent(t, newStore(t)) })
	t.Run("NotFound", func(t *testing.T) { testNotFound(t, newStore(t)) })
	t.Run("InvalidKeys", func(t *testing.T) { testInvalidKeys(t, newStore(t)) })
	t.Run("EmptyObjectAndDefaultContentType", func(t *testing.T) { testEmptyObject(t, newStore(t)) })
	t.Run("StoredBytesAreNotAliased", func(t *testing.T) { testNotAliased(t, newStore(t)) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, newStore(t)) })
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func requireObject(t *testing.T, s ports.ObjectStore, key string, want []byte, contentType string) {
	t.Helper()
	ctx := context.Background()
	data, info, err := s.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, want, data)
	wantInfo := ports.ObjectInfo{Key: key, Size: int64(len(want)), ContentType: contentType, SHA256: digest(want)}
	assert.Equal(t, wantInfo, info, "Get info")
	stat, err := s.Stat(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, wantInfo, stat, "Stat info")
}

func testRoundTrip(t *testing.T, s ports.ObjectStore) {
	ctx := context.Background()
	png := []byte("\x89PNG\r\n\x1a\nnot really")
	require.NoError(t, s.Put(ctx, "media/ws/1/original", png, "image/png"))
	requireObject(t, s, "media/ws/1/original", png, "image/png")

	created, err := s.PutIfAbsent(ctx, "media/ws/1/thumbnail", []byte("thumb"), "image/jpeg")
	require.NoError(t, err)
	assert.True(t, created)
	requireObject(t, s, "media/ws/1/thumbnail", []byte("thumb"), "image/jpeg")
	requireObject(t, s, "media/ws/1/original", png, "image/png")
}

func testPutReplaces(t *testing.T, s ports.ObjectStore) {
	ctx := context.Background()
	require.NoError(t, s.Put(ctx, "k/upload", []byte("first, longer content"), "image/png"))
	require.NoError(t, s.Put(ctx, "k/upload", []byte("second"), "image/jpeg"))
	requireObject(t, s, "k/upload", []byte("second"), "image/jpeg")
}

func testPutIfAbsentKeepsTheFirst(t *testing.T, s ports.ObjectStore) {
	ctx := context.Background()
	created, err := s.PutIfAbsent(ctx, "k/variant", []byte("first"), "image/png")
	require.NoError(t, err)
	assert.True(t, created)
	created, err = s.PutIfAbsent(ctx, "k/variant", []byte("second"), "image/jpeg")
	require.NoError(t, err)
	assert.False(t, created, "an object is already there")
	requireObject(t, s, "k/variant", []byte("first"), "image/png")

	// An object Put earlier counts as present too.
	require.NoError(t, s.Put(ctx, "k/put", []byte("put"), "image/png"))
	created, err = s.PutIfAbsent(ctx, "k/put", []byte("other"), "image/png")
	require.NoError(t, err)
	assert.False(t, created)
	requireObject(t, s, "k/put", []byte("put"), "image/png")
}

func testConcurrentPutIfAbsent(t *testing.T, s ports.ObjectStore) {
	const writers = 20
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []int
	)
	for i := range writers {
		wg.Go(func() {
			created, err := s.PutIfAbsent(context.Background(), "race/one", fmt.Appendf(nil, "writer %02d", i), "image/png")
			assert.NoError(t, err)
			if created {
				mu.Lock()
				winners = append(winners, i)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Len(t, winners, 1, "exactly one writer creates the object")
	requireObject(t, s, "race/one", fmt.Appendf(nil, "writer %02d", winners[0]), "image/png")
}

func testNotFound(t *testing.T, s ports.ObjectStore) {
	ctx := context.Background()
	_, _, err := s.Get(ctx, "missing/object")
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "Get: %v", err)
	_, err = s.Stat(ctx, "missing/object")
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "Stat: %v", err)

	// A prefix of an existing key is not an object.
	require.NoError(t, s.Put(ctx, "dir/object", []byte("x"), "image/png"))
	_, _, err = s.Get(ctx, "dir")
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "Get of a prefix: %v", err)
	_, err = s.Stat(ctx, "dir")
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "Stat of a prefix: %v", err)
	_, err = s.Stat(ctx, "dir/object/below")
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "Stat below an object: %v", err)
}

// InvalidKeys are keys every adapter refuses with domain.CodeValidation.
var InvalidKeys = map[string]string{
	"empty":             "",
	"absolute":          "/etc/passwd",
	"parent":            "../outside",
	"parent inside":     "media/../../outside",
	"parent at the end": "media/..",
	"dot segment":       "media/./x",
	"hidden segment":    "media/.x.meta",
	"empty segment":     "media//x",
	"trailing slash":    "media/x/",
	"backslash":         `media\..\x`,
	"NUL":               "media/x\x00y",
	"newline":           "media/x\ny",
	"not UTF-8":         "media/\xff",
	"too long":          strings.Repeat("a", 1025),
}

func testInvalidKeys(t *testing.T, s ports.ObjectStore) {
	ctx := context.Background()
	for name, key := range InvalidKeys {
		t.Run(name, func(t *testing.T) {
			err := s.Put(ctx, key, []byte("x"), "image/png")
			assert.Equal(t, domain.CodeValidation, domain.ErrorCode(err), "Put: %v", err)
			_, err = s.PutIfAbsent(ctx, key, []byte("x"), "image/png")
			assert.Equal(t, domain.CodeValidation, domain.ErrorCode(err), "PutIfAbsent: %v", err)
			_, _, err = s.Get(ctx, key)
			assert.Equal(t, domain.CodeValidation, domain.ErrorCode(err), "Get: %v", err)
			assert.Equal(t, domain.CodeValidation, domain.ErrorCode(s.Delete(ctx, key)), "Delete")
			_, err = s.Stat(ctx, key)
			assert.Equal(t, domain.CodeValidation, domain.ErrorCode(err), "Stat: %v", err)
			var de *domain.Error
			if key != "" && assert.ErrorAs(t, err, &de) {
				assert.NotContains(t, de.Message, key, "the message never repeats the key")
			}
		})
	}
}

func testEmptyObject(t *testing.T, s ports.ObjectStore) {
	ctx := context.Background()
	require.NoError(t, s.Put(ctx, "empty/object", nil, ""))
	_, info, err := s.Get(ctx, "empty/object")
	require.NoError(t, err)
	assert.Equal(t, ports.ObjectInfo{Key: "empty/object", Size: 0, ContentType: "application/octet-stream", SHA256: digest(nil)}, info)
}

func testNotAliased(t *testing.T, s ports.ObjectStore) {
	ctx := context.Background()
	data := []byte("original")
	require.NoError(t, s.Put(ctx, "alias/object", data, "image/png"))
	copy(data, "XXXXXXXX")
	got, _, err := s.Get(ctx, "alias/object")
	require.NoError(t, err)
	assert.Equal(t, []byte("original"), got, "changing the caller's slice changes nothing stored")
	copy(got, "YYYYYYYY")
	again, _, err := s.Get(ctx, "alias/object")
	require.NoError(t, err)
	assert.True(t, bytes.Equal(again, []byte("original")), "changing a returned slice changes nothing stored")
}

func testDelete(t *testing.T, s ports.ObjectStore) {
	ctx := context.Background()
	require.NoError(t, s.Put(ctx, "del/one", []byte("one"), "image/png"))
	require.NoError(t, s.Put(ctx, "del/two", []byte("two"), "image/png"))
	require.NoError(t, s.Delete(ctx, "del/one"))
	_, err := s.Stat(ctx, "del/one")
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "deleted: %v", err)
	_, _, err = s.Get(ctx, "del/one")
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "deleted: %v", err)
	requireObject(t, s, "del/two", []byte("two"), "image/png")

	require.NoError(t, s.Delete(ctx, "del/one"), "deleting again is no error")
	require.NoError(t, s.Delete(ctx, "never/stored"), "deleting what never was is no error")
	require.NoError(t, s.Delete(ctx, "del"), "a prefix of objects is no object: nothing to delete")
	requireObject(t, s, "del/two", []byte("two"), "image/png")

	created, err := s.PutIfAbsent(ctx, "del/one", []byte("again"), "image/jpeg")
	require.NoError(t, err)
	assert.True(t, created, "a deleted key is free again")
	requireObject(t, s, "del/one", []byte("again"), "image/jpeg")
}
