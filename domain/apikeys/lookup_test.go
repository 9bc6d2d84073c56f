package apikeys_test

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain/apikeys"
	"github.com/oncehq/once/domain/keyring"
	"github.com/oncehq/once/ports"
)

// heldDirectory holds its first look-up until release is closed, and
// counts them all.
type heldDirectory struct {
	ports.APIKeyDirectory
	release chan struct{}
	lookups atomic.Int64
}

func (d *heldDirectory) WorkspaceOf(ctx context.Context, lookupID string) (uuid.UUID, error) {
	if d.lookups.Add(1) == 1 {
		<-d.release
	}
	return d.APIKeyDirectory.WorkspaceOf(ctx, lookupID)
}

// The requests with one key that miss the cache at once share one read:
// a burst from one client with a cold cache cannot take the pool before
// its workspace's limits apply.
func TestConcurrentMissesOfOneKeyShareOneRead(t *testing.T) {
	w := newWorld(t)
	maker, uow := w.process(t)
	created, err := create(t, maker, uow, w.admin, "media:read")
	require.NoError(t, err)

	hasher, err := apikeys.NewHasher([]keyring.Key{key1})
	require.NoError(t, err)
	dir := &heldDirectory{APIKeyDirectory: memory.NewAPIKeyDirectory(w.db), release: make(chan struct{})}
	svc := apikeys.NewService(apikeys.Deps{
		UoW: memory.NewUnitOfWork(w.db), Directory: dir, Hasher: hasher, Clock: w.clock, IDs: system.NewIDs(),
		Log: slog.New(slog.DiscardHandler), Cache: apikeys.CacheOptions{Size: 100, TTL: time.Hour},
	})
	const requests = 50
	var done sync.WaitGroup
	for range requests {
		done.Go(func() {
			_, err := svc.Authenticate(context.Background(), created.Secret)
			assert.NoError(t, err)
		})
	}
	require.Eventually(t, func() bool { return dir.lookups.Load() >= 1 }, 30*time.Second, time.Millisecond)
	close(dir.release)
	done.Wait()
	assert.Equal(t, int64(1), dir.lookups.Load(), "one read for them all")
}
