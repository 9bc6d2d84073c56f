package contract

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

func newProduct(ws uuid.UUID) model.Product {
	at := writeTime()
	return model.Product{
		ID:          uuid.New(),
		WorkspaceID: ws,
		Title:       "Mug « été » 日本",
		Description: "line one\nline two; 'quoted' \"double\" \\ backslash",
		PriceMinor:  1999,
		Currency:    "EUR",
		MediaIDs:    []uuid.UUID{uuid.New(), uuid.New(), uuid.New()},
		Revision:    1,
		CreatedAt:   at,
		UpdatedAt:   at,
	}
}

func normProduct(p model.Product) model.Product {
	p.CreatedAt = dbTime(p.CreatedAt)
	p.UpdatedAt = dbTime(p.UpdatedAt)
	return p
}

func getProduct(t *testing.T, h Harness, ws, id uuid.UUID) (model.Product, error) {
	t.Helper()
	var p model.Product
	err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		p, err = tx.Products().Get(ctx, id)
		return err
	})
	return p, err
}

func updateProduct(t *testing.T, h Harness, ws uuid.UUID, p model.Product, expected int) (model.Product, error) {
	t.Helper()
	var saved model.Product
	err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		saved, err = tx.Products().Update(ctx, p, expected)
		return err
	})
	return saved, err
}

func testProducts(t *testing.T, h Harness) {
	t.Run("create then get keeps every field, times in UTC", func(t *testing.T) {
		ws := newWorkspace(t, h)
		p := newProduct(ws)
		want := normProduct(p)
		want.MediaIDs = append([]uuid.UUID(nil), p.MediaIDs...)
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Products().Create(ctx, p) })
		p.MediaIDs[0] = uuid.Nil // the stored row must not share memory with the caller's value

		got, err := getProduct(t, h, ws, p.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)
		require.Equal(t, time.UTC, got.CreatedAt.Location())
	})

	t.Run("no media reads back as nil", func(t *testing.T) {
		ws := newWorkspace(t, h)
		p := newProduct(ws)
		p.MediaIDs = []uuid.UUID{}
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Products().Create(ctx, p) })
		got, err := getProduct(t, h, ws, p.ID)
		require.NoError(t, err)
		require.Nil(t, got.MediaIDs)
	})

	t.Run("update on the stored revision saves and bumps it", func(t *testing.T) {
		ws := newWorkspace(t, h)
		p := newProductIn(t, h, ws)

		changed := p
		changed.Title = "New title"
		changed.Description = ""
		changed.PriceMinor = 2500
		changed.Currency = "USD"
		changed.MediaIDs = []uuid.UUID{p.MediaIDs[2], p.MediaIDs[0]}
		changed.UpdatedAt = p.UpdatedAt.Add(time.Hour).In(elsewhere)
		// Not mutable or ignored: these must be left as they were.
		changed.Revision = 42
		changed.CreatedAt = p.CreatedAt.Add(-time.Hour)
		saved, err := updateProduct(t, h, ws, changed, 1)
		require.NoError(t, err)

		want := p
		want.Title, want.Description, want.PriceMinor, want.Currency = changed.Title, changed.Description, changed.PriceMinor, changed.Currency
		want.MediaIDs = changed.MediaIDs
		want.UpdatedAt = dbTime(changed.UpdatedAt)
		want.Revision = 2
		require.Equal(t, want, saved)
		got, err := getProduct(t, h, ws, p.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)

		// And again, from revision 2.
		changed.Title = "Third"
		saved, err = updateProduct(t, h, ws, changed, 2)
		require.NoError(t, err)
		require.Equal(t, 3, saved.Revision)
		require.Equal(t, "Third", saved.Title)
	})

	t.Run("a stale revision is refused and changes nothing", func(t *testing.T) {
		ws := newWorkspace(t, h)
		p := newProductIn(t, h, ws)
		first := p
		first.Title = "first editor"
		_, err := updateProduct(t, h, ws, first, 1)
		require.NoError(t, err)

		second := p
		second.Title = "second editor"
		_, err = updateProduct(t, h, ws, second, 1)
		requireCode(t, err, domain.CodePreconditionFailed)
		_, err = updateProduct(t, h, ws, second, 3)
		requireCode(t, err, domain.CodePreconditionFailed)

		got, err := getProduct(t, h, ws, p.ID)
		require.NoError(t, err)
		require.Equal(t, "first editor", got.Title)
		require.Equal(t, 2, got.Revision)
	})

	t.Run("two concurrent saves of one revision: one wins", func(t *testing.T) {
		ws := newWorkspace(t, h)
		p := newProductIn(t, h, ws)
		var attempts [2]func(ctx context.Context, tx ports.Tx) error
		for i := range attempts {
			attempts[i] = func(ctx context.Context, tx ports.Tx) error {
				q := p
				q.Title = []string{"left", "right"}[i]
				_, err := tx.Products().Update(ctx, q, 1)
				return err
			}
		}
		winner, loserErr := oneWins(t, raceTwo(t, h, ws, attempts))
		requireCode(t, loserErr, domain.CodePreconditionFailed)
		got, err := getProduct(t, h, ws, p.ID)
		require.NoError(t, err)
		require.Equal(t, 2, got.Revision)
		require.Equal(t, []string{"left", "right"}[winner], got.Title)
	})

	t.Run("missing is not found", func(t *testing.T) {
		ws := newWorkspace(t, h)
		_, err := getProduct(t, h, ws, uuid.New())
		requireCode(t, err, domain.CodeNotFound)
		_, err = updateProduct(t, h, ws, newProduct(ws), 1)
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("an existing id is a conflict", func(t *testing.T) {
		ws := newWorkspace(t, h)
		p := newProductIn(t, h, ws)
		again := newProduct(ws)
		again.ID = p.ID
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Products().Create(ctx, again) })
		requireCode(t, err, domain.CodeConflict)
	})

	t.Run("a product of another workspace is invisible", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		p := newProductIn(t, h, wsA)
		_, err := getProduct(t, h, wsB, p.ID)
		requireCode(t, err, domain.CodeNotFound)
		hijack := p
		hijack.Title = "hijacked"
		_, err = updateProduct(t, h, wsB, hijack, 1)
		requireCode(t, err, domain.CodeNotFound)
		err = transact(t, h, wsB, func(ctx context.Context, tx ports.Tx) error { return tx.Products().Create(ctx, newProduct(wsA)) })
		requireCode(t, err, domain.CodeForbidden)
		got, err := getProduct(t, h, wsA, p.ID)
		require.NoError(t, err)
		require.Equal(t, p, got)
	})
}
