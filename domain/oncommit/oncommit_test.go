package oncommit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain/oncommit"
	"github.com/oncehq/once/ports"
)

// notingTx is a Tx that hands its notes to the test's fn.
type notingTx struct {
	ports.Tx
	notes *oncommit.Notes[string]
}

// retryingUoW runs fn twice, as an adapter that retries after a
// serialization failure would: the first run's notes must not count.
type retryingUoW struct{ next ports.UnitOfWork }

func (u retryingUoW) Transact(ctx context.Context, ws uuid.UUID, fn func(context.Context, ports.Tx) error) error {
	return u.next.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		if err := fn(ctx, tx); err != nil {
			return err
		}
		return fn(ctx, tx)
	})
}

func TestWrapCallsCommittedWithTheNotesOfACommittedTransactionOnly(t *testing.T) {
	var calls [][]string
	wrap := func(uow ports.UnitOfWork) ports.UnitOfWork {
		return oncommit.Wrap(uow,
			func(tx ports.Tx, notes *oncommit.Notes[string]) ports.Tx { return notingTx{Tx: tx, notes: notes} },
			func(_ context.Context, noted []string) { calls = append(calls, noted) })
	}
	uow := wrap(memory.NewUnitOfWork(memory.NewDB()))
	ctx, ws := context.Background(), uuid.New()
	note := func(tx ports.Tx, s ...string) { tx.(notingTx).notes.Add(s...) }

	require.NoError(t, uow.Transact(ctx, ws, func(_ context.Context, tx ports.Tx) error {
		note(tx, "a", "b")
		assert.Empty(t, calls, "never inside the transaction")
		return nil
	}))
	assert.Equal(t, [][]string{{"a", "b"}}, calls)

	boom := errors.New("rolled back")
	require.ErrorIs(t, uow.Transact(ctx, ws, func(_ context.Context, tx ports.Tx) error {
		note(tx, "c")
		return boom
	}), boom)
	require.NoError(t, uow.Transact(ctx, ws, func(context.Context, ports.Tx) error { return nil }))
	assert.Len(t, calls, 1, "nothing after a rollback, nor after a commit that noted nothing")

	runs := 0
	require.NoError(t, wrap(retryingUoW{memory.NewUnitOfWork(memory.NewDB())}).Transact(ctx, ws, func(_ context.Context, tx ports.Tx) error {
		runs++
		note(tx, "run"+string(rune('0'+runs)))
		return nil
	}))
	assert.Equal(t, []string{"run2"}, calls[1], "a run again starts from no notes")
}
