package dispatch_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// countingSignal counts Committed calls.
type countingSignal struct{ n atomic.Int32 }

func (s *countingSignal) Committed()            { s.n.Add(1) }
func (s *countingSignal) Wake() <-chan struct{} { return nil }

func appendOne(ctx context.Context, tx ports.Tx, ws uuid.UUID) error {
	ev, err := model.NewOutboxEvent(uuid.New(), ws, "test.event", "thing", uuid.New(), payload{}, newClock().Now())
	if err != nil {
		return err
	}
	return tx.Outbox().Append(ctx, ev)
}

func TestNotifyOnCommitSignalsOnlyAfterACommitThatAppended(t *testing.T) {
	e := newEnv(t)
	ws := uuid.New()
	sig := &countingSignal{}
	uow := dispatch.NotifyOnCommit(e.uow, sig)
	ctx := context.Background()

	require.NoError(t, uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		if err := appendOne(ctx, tx, ws); err != nil {
			return err
		}
		assert.Zero(t, sig.n.Load(), "never inside the transaction")
		return nil
	}))
	assert.EqualValues(t, 1, sig.n.Load(), "after commit")

	boom := errors.New("business rule failed")
	err := uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		require.NoError(t, appendOne(ctx, tx, ws))
		return boom
	})
	assert.ErrorIs(t, err, boom)
	assert.EqualValues(t, 1, sig.n.Load(), "not on rollback")

	require.NoError(t, uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		_, err := tx.Outbox().List(ctx, "", 10)
		return err
	}))
	assert.EqualValues(t, 1, sig.n.Load(), "not when nothing was appended")

	require.NoError(t, uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		unsafe := model.OutboxEvent{ID: uuid.New(), WorkspaceID: ws, Type: "t", Payload: []byte(`{"api_key":"x"}`)}
		assert.Error(t, tx.Outbox().Append(ctx, unsafe))
		return nil
	}))
	assert.EqualValues(t, 1, sig.n.Load(), "not when the append was refused")
}
