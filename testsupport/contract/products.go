package contract

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// productTable is the products table to the table contract (tables.go).
var productTable = table[model.Product]{
	repo: func(tx ports.Tx) tableRepo[model.Product] { return revisedProducts{tx.Products()} },
	keys: func(p *model.Product) (*uuid.UUID, *uuid.UUID) { return &p.ID, &p.WorkspaceID },
	row:  func(_ *testing.T, _ Harness, ws uuid.UUID) model.Product { return newProduct(ws) },
	stored: func(p model.Product) model.Product {
		p.MediaIDs = slices.Clone(p.MediaIDs)
		p.CreatedAt, p.UpdatedAt = dbTime(p.CreatedAt), dbTime(p.UpdatedAt)
		return p
	},
	scramble: func(p *model.Product) { p.MediaIDs[0] = uuid.Nil },
	updates:  "on the stored revision replaces title, description, price, currency, media and updated_at, and bumps the revision",
	mutable: func(p *model.Product) {
		p.Title, p.Description, p.PriceMinor, p.Currency = "New title", "", 2500, "USD"
		p.MediaIDs = []uuid.UUID{p.MediaIDs[2], p.MediaIDs[0]}
		p.UpdatedAt = p.UpdatedAt.Add(time.Hour)
	},
	immutable: func(p *model.Product) { p.CreatedAt = p.CreatedAt.Add(-time.Hour) },
	bump:      func(p *model.Product) { p.Revision++ },
}

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

// revisedProducts is the products repository to the table contract: its
// Update saves a product on the revision the product holds.
type revisedProducts struct{ ports.ProductRepository }

func (r revisedProducts) Update(ctx context.Context, p model.Product) error {
	_, err := r.ProductRepository.Update(ctx, p, p.Revision)
	return err
}

func getProduct(t *testing.T, h Harness, ws, id uuid.UUID) (model.Product, error) {
	t.Helper()
	return productTable.get(t, h, ws, id)
}

func updateProduct(t *testing.T, h Harness, ws uuid.UUID, p model.Product, expected int) (model.Product, error) {
	t.Helper()
	return query(t, h, ws, func(ctx context.Context, tx ports.Tx) (model.Product, error) {
		return tx.Products().Update(ctx, p, expected)
	})
}

func testProducts(t *testing.T, h Harness) {
	t.Run("no media reads back as nil", func(t *testing.T) {
		ws := newWorkspace(t, h)
		p := newProduct(ws)
		p.MediaIDs = []uuid.UUID{}
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Products().Create(ctx, p) })
		got, err := getProduct(t, h, ws, p.ID)
		require.NoError(t, err)
		require.Nil(t, got.MediaIDs)
	})

	t.Run("update returns what it saved and ignores the revision the product holds", func(t *testing.T) {
		ws := newWorkspace(t, h)
		p := newProductIn(t, h, ws)
		changed, want := productTable.change(p)
		changed.UpdatedAt = changed.UpdatedAt.In(elsewhere)
		changed.Revision = 42 // the expected revision is what counts
		saved, err := updateProduct(t, h, ws, changed, 1)
		require.NoError(t, err)
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
		winner, loserErr := oneWins(t, raceTwo(t, h, ws, func(i int, ctx context.Context, tx ports.Tx) error {
			q := p
			q.Title = []string{"left", "right"}[i]
			_, err := tx.Products().Update(ctx, q, 1)
			return err
		}))
		requireCode(t, loserErr, domain.CodePreconditionFailed)
		got, err := getProduct(t, h, ws, p.ID)
		require.NoError(t, err)
		require.Equal(t, 2, got.Revision)
		require.Equal(t, []string{"left", "right"}[winner], got.Title)
	})

	t.Run("forget media takes the ids out of the workspace's drafts naming them, in order, as a save", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		withMedia := func(ws uuid.UUID, ids ...uuid.UUID) model.Product {
			p := newProduct(ws)
			p.MediaIDs = ids
			inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Products().Create(ctx, p) })
			return productTable.stored(p)
		}
		a, b, c, d := uuid.New(), uuid.New(), uuid.New(), uuid.New()
		many := withMedia(ws, c, a, d, b)
		only := withMedia(ws, b)
		untouched := withMedia(ws, d)
		elsewhere := withMedia(other, a)

		at := writeTime().Add(time.Hour)
		n := mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) (int, error) {
			return tx.Products().ForgetMedia(ctx, []uuid.UUID{a, b}, at)
		})
		require.Equal(t, 2, n)

		want := many
		want.MediaIDs, want.Revision, want.UpdatedAt = []uuid.UUID{c, d}, 2, dbTime(at)
		got, err := getProduct(t, h, ws, many.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)
		want = only
		want.MediaIDs, want.Revision, want.UpdatedAt = nil, 2, dbTime(at)
		got, err = getProduct(t, h, ws, only.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)
		for _, p := range []model.Product{untouched, elsewhere} {
			got, err := getProduct(t, h, p.WorkspaceID, p.ID)
			require.NoError(t, err)
			require.Equal(t, p, got, "a draft naming none of the ids, or of another workspace, stays")
		}

		// The editor of the revision before is told the draft changed.
		_, err = updateProduct(t, h, ws, many, 1)
		requireCode(t, err, domain.CodePreconditionFailed)
		n = mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) (int, error) {
			return tx.Products().ForgetMedia(ctx, []uuid.UUID{a, b}, at)
		})
		require.Zero(t, n, "nothing names them any more")
	})
}
