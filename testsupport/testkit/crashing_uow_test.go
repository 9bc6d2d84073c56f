package testkit_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

// recordingUoW commits when fn succeeds and rolls back when it fails.
type recordingUoW struct {
	mu                 sync.Mutex
	commits, rollbacks int
}

func (u *recordingUoW) Transact(ctx context.Context, _ uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) error {
	err := fn(ctx, nil)
	u.mu.Lock()
	defer u.mu.Unlock()
	if err != nil {
		u.rollbacks++
	} else {
		u.commits++
	}
	return err
}

func transact(u ports.UnitOfWork, ran *int) error {
	return u.Transact(context.Background(), uuid.Nil, func(context.Context, ports.Tx) error {
		*ran++
		return nil
	})
}

func TestCrashNextCountsFromNowAndCrashesOnce(t *testing.T) {
	inner := &recordingUoW{}
	u := testkit.NewCrashingUoW(inner)
	ran := 0
	require.NoError(t, transact(u, &ran), "nothing crashes before CrashNext")
	require.NoError(t, transact(u, &ran))

	u.CrashNext(2)
	require.NoError(t, transact(u, &ran))
	err := transact(u, &ran)
	assert.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err))
	assert.Equal(t, 4, ran, "the crashing call ran its function")
	assert.Equal(t, 3, inner.commits)
	assert.Equal(t, 1, inner.rollbacks)

	for range 3 {
		require.NoError(t, transact(u, &ran), "once")
	}
}

func TestCrashNextKeepsTheFunctionsError(t *testing.T) {
	u := testkit.NewCrashingUoW(&recordingUoW{})
	u.CrashNext(1)
	boom := errors.New("boom")
	err := u.Transact(context.Background(), uuid.Nil, func(context.Context, ports.Tx) error { return boom })
	assert.Same(t, boom, err)
	ran := 0
	assert.NoError(t, transact(u, &ran), "the crash was spent")
}

func TestCrashNextZeroCancels(t *testing.T) {
	u := testkit.NewCrashingUoW(&recordingUoW{})
	u.CrashNext(1)
	u.CrashNext(0)
	ran := 0
	assert.NoError(t, transact(u, &ran))
}

func TestCrashingUoWIsSafeForConcurrentUse(t *testing.T) {
	inner := &recordingUoW{}
	u := testkit.NewCrashingUoW(inner)
	u.CrashNext(10)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			_ = u.Transact(context.Background(), uuid.Nil, func(context.Context, ports.Tx) error { return nil })
		})
	}
	wg.Wait()
	assert.Equal(t, 49, inner.commits)
	assert.Equal(t, 1, inner.rollbacks)
}
