package app_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/apitest"
)

// crashLease is the lease of the Dispatcher that dies in the crash tests:
// short, so that a second Dispatcher takes its events over soon.
const crashLease = 2 * time.Second

// publishAndDie runs one round of Dispatcher "dispatcher-a" whose process
// dies right after pub accepted its batch: no mark, no release. It returns
// once the batch was accepted and the Dispatcher killed.
func publishAndDie(t *testing.T, s *apitest.Server, disc ports.OutboxDiscovery, pub ports.Publisher) {
	t.Helper()
	published, dead := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(dead) })
	dying := publisherFunc(func(ctx context.Context, msgs ...ports.Message) error {
		if err := pub.Publish(ctx, msgs...); err != nil {
			return err
		}
		close(published)
		// The process dies here (kill -9): nothing after the publish runs,
		// no mark, no release. (A stop, a canceled context, would hand the
		// event back without counting an attempt.)
		<-dead
		return errors.New("dead")
	})
	a, err := dispatch.New(dispatch.Config{Owner: "dispatcher-a", Lease: crashLease},
		dispatch.Deps{UnitOfWork: s.UoW, Discovery: disc, Publisher: dying, Clock: system.NewClock()})
	require.NoError(t, err)
	go func() { _, _ = a.RunOnce(context.Background()) }()
	<-published
}

// republishAfterLease runs Dispatcher "dispatcher-b" until it published n
// events again through pub, which it can do only once the dead
// Dispatcher's lease ran out.
func republishAfterLease(t *testing.T, s *apitest.Server, disc ports.OutboxDiscovery, pub ports.Publisher, n int) {
	t.Helper()
	var republished atomic.Int32
	counting := publisherFunc(func(ctx context.Context, msgs ...ports.Message) error {
		republished.Add(int32(len(msgs)))
		return pub.Publish(ctx, msgs...)
	})
	b, err := dispatch.New(dispatch.Config{Owner: "dispatcher-b", Lease: 30 * time.Second},
		dispatch.Deps{UnitOfWork: s.UoW, Discovery: disc, Publisher: counting, Clock: system.NewClock()})
	require.NoError(t, err)
	res, err := b.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Zero(t, res.Published, "the lease of the dead dispatcher still holds")

	apitest.Eventually(t, crashLease+10*time.Second, "re-publication after the lease", func() bool {
		_, err := b.RunOnce(context.Background())
		require.NoError(t, err)
		return republished.Load() == int32(n)
	})
}
