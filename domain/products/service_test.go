package products_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/products"
	"github.com/oncehq/once/ports"
)

// knownMedia are the media every workspace of newService has, as many as
// a draft may name.
var knownMedia = func() []uuid.UUID {
	ids := make([]uuid.UUID, products.MaxMediaIDs)
	for i := range ids {
		ids[i] = uuid.New()
	}
	return ids
}()

// newService is the service on an empty memory store, but for the caller's
// workspace's knownMedia.
func newService() (*products.Service, model.Principal) {
	svc, p, _ := newServiceOn()
	return svc, p
}

// newServiceOn is newService with its unit of work, to add other rows.
func newServiceOn() (*products.Service, model.Principal, ports.UnitOfWork) {
	uow := memory.NewUnitOfWork(memory.NewDB())
	svc := products.NewService(uow, system.NewClock(), system.NewIDs())
	p := model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New(), Role: model.RoleAdmin}
	addMedia(uow, p.WorkspaceID, knownMedia...)
	return svc, p, uow
}

func addMedia(uow ports.UnitOfWork, workspace uuid.UUID, ids ...uuid.UUID) {
	err := uow.Transact(context.Background(), workspace, func(ctx context.Context, tx ports.Tx) error {
		for _, id := range ids {
			m := model.Media{ID: id, WorkspaceID: workspace, Filename: "mug.png", ContentType: "image/png",
				SizeBytes: 1, ObjectKey: "media/" + id.String(), Status: model.MediaReady}
			if err := tx.Media().Create(ctx, m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
}

func draft() products.Draft {
	return products.Draft{Title: "Mug", Description: "A mug.", PriceMinor: 1299, Currency: "EUR", MediaIDs: []uuid.UUID{knownMedia[0]}}
}

func TestCreateStartsAtRevisionOne(t *testing.T) {
	svc, p := newService()
	ctx := context.Background()
	d := draft()
	d.Title = "  Mug  "
	created, err := svc.Create(ctx, p, d)
	require.NoError(t, err)
	assert.Equal(t, 1, created.Revision)
	assert.Equal(t, "Mug", created.Title, "the title is trimmed")
	assert.Equal(t, p.WorkspaceID, created.WorkspaceID)
	assert.Equal(t, d.MediaIDs, created.MediaIDs)

	d.MediaIDs[0] = uuid.New() // the caller's slice is not shared
	got, err := svc.Get(ctx, p, created.ID)
	require.NoError(t, err)
	assert.Equal(t, created, got)

	other := model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New()}
	_, err = svc.Get(ctx, other, created.ID)
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "another workspace does not see it")
}

func TestCreateWithoutMedia(t *testing.T) {
	svc, p := newService()
	d := draft()
	d.MediaIDs = nil
	created, err := svc.Create(context.Background(), p, d)
	require.NoError(t, err)
	assert.Empty(t, created.MediaIDs)
}

func TestDraftValidation(t *testing.T) {
	dup := uuid.New()
	tooMany := make([]uuid.UUID, products.MaxMediaIDs+1)
	for i := range tooMany {
		tooMany[i] = uuid.New()
	}
	bad := map[string]func(d *products.Draft){
		"empty title":       func(d *products.Draft) { d.Title = "" },
		"blank title":       func(d *products.Draft) { d.Title = "   " },
		"long title":        func(d *products.Draft) { d.Title = strings.Repeat("é", products.MaxTitleLength+1) },
		"long description":  func(d *products.Draft) { d.Description = strings.Repeat("x", products.MaxDescriptionLength+1) },
		"negative price":    func(d *products.Draft) { d.PriceMinor = -1 },
		"lower currency":    func(d *products.Draft) { d.Currency = "eur" },
		"short currency":    func(d *products.Draft) { d.Currency = "EU" },
		"long currency":     func(d *products.Draft) { d.Currency = "EURO" },
		"non-ASCII":         func(d *products.Draft) { d.Currency = "ÉUR" },
		"too many media":    func(d *products.Draft) { d.MediaIDs = tooMany },
		"nil media id":      func(d *products.Draft) { d.MediaIDs = []uuid.UUID{uuid.Nil} },
		"repeated media id": func(d *products.Draft) { d.MediaIDs = []uuid.UUID{dup, dup} },
	}
	svc, p := newService()
	ctx := context.Background()
	existing, err := svc.Create(ctx, p, draft())
	require.NoError(t, err)
	for name, change := range bad {
		t.Run(name, func(t *testing.T) {
			d := draft()
			change(&d)
			_, err := svc.Create(ctx, p, d)
			assert.Equal(t, domain.CodeValidation, domain.ErrorCode(err), "Create: %v", err)
			_, err = svc.Update(ctx, p, existing.ID, existing.Revision, d)
			assert.Equal(t, domain.CodeValidation, domain.ErrorCode(err), "Update: %v", err)
		})
	}
	got, err := svc.Get(ctx, p, existing.ID)
	require.NoError(t, err)
	assert.Equal(t, existing, got, "refused saves change nothing")

	ok := draft()
	ok.Title = strings.Repeat("é", products.MaxTitleLength)
	ok.PriceMinor = 0
	ok.MediaIDs = knownMedia
	_, err = svc.Create(ctx, p, ok)
	assert.NoError(t, err, "the limits themselves are allowed")
}

func TestUpdateBumpsTheRevision(t *testing.T) {
	svc, p := newService()
	ctx := context.Background()
	created, err := svc.Create(ctx, p, draft())
	require.NoError(t, err)

	d := products.Draft{Title: "Big mug", Description: "Bigger.", PriceMinor: 1599, Currency: "USD"}
	saved, err := svc.Update(ctx, p, created.ID, 1, d)
	require.NoError(t, err)
	assert.Equal(t, 2, saved.Revision)
	assert.Equal(t, "Big mug", saved.Title)
	assert.Equal(t, "Bigger.", saved.Description)
	assert.Equal(t, int64(1599), saved.PriceMinor)
	assert.Equal(t, "USD", saved.Currency)
	assert.Empty(t, saved.MediaIDs)
	assert.Equal(t, created.CreatedAt, saved.CreatedAt)
	assert.False(t, saved.UpdatedAt.Before(created.UpdatedAt))

	got, err := svc.Get(ctx, p, created.ID)
	require.NoError(t, err)
	assert.Equal(t, saved, got)
}

func TestUpdateFromAStaleRevisionChangesNothing(t *testing.T) {
	svc, p := newService()
	ctx := context.Background()
	created, err := svc.Create(ctx, p, draft())
	require.NoError(t, err)
	first := draft()
	first.Title = "First editor"
	saved, err := svc.Update(ctx, p, created.ID, 1, first)
	require.NoError(t, err)

	second := draft()
	second.Title = "Second editor"
	for _, rev := range []int{1, 3, 0} {
		_, err = svc.Update(ctx, p, created.ID, rev, second)
		assert.Equal(t, domain.CodePreconditionFailed, domain.ErrorCode(err), "revision %d: %v", rev, err)
	}
	got, err := svc.Get(ctx, p, created.ID)
	require.NoError(t, err)
	assert.Equal(t, saved, got)
}

func TestUpdateOfAMissingProduct(t *testing.T) {
	svc, p := newService()
	_, err := svc.Update(context.Background(), p, uuid.New(), 1, draft())
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err))

	created, err := svc.Create(context.Background(), p, draft())
	require.NoError(t, err)
	other := model.Principal{WorkspaceID: uuid.New(), UserID: uuid.New()}
	noMedia := draft()
	noMedia.MediaIDs = nil // the other workspace has none
	_, err = svc.Update(context.Background(), other, created.ID, 1, noMedia)
	assert.Equal(t, domain.CodeNotFound, domain.ErrorCode(err), "another workspace cannot save it")
}

// Editors saving from the same revision at once: one wins, the others get
// 412 and must reload.
func TestConcurrentSavesFromOneRevision(t *testing.T) {
	svc, p := newService()
	ctx := context.Background()
	created, err := svc.Create(ctx, p, draft())
	require.NoError(t, err)
	const editors = 8
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		wins   int
		stales int
	)
	for i := range editors {
		wg.Go(func() {
			d := draft()
			d.Title = strings.Repeat("t", i+1)
			_, err := svc.Update(ctx, p, created.ID, 1, d)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case domain.IsCode(err, domain.CodePreconditionFailed):
				stales++
			default:
				t.Errorf("unexpected error: %v", err)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 1, wins)
	assert.Equal(t, editors-1, stales)
	got, err := svc.Get(ctx, p, created.ID)
	require.NoError(t, err)
	assert.Equal(t, 2, got.Revision)
}

// TestDraftsNameExistingMedia: a draft naming an id the workspace has no
// media of (one of another workspace included) is refused with
// REFERENCE_NOT_FOUND naming the item, and nothing is saved.
func TestDraftsNameExistingMedia(t *testing.T) {
	svc, p, uow := newServiceOn()
	ctx := context.Background()
	existing, err := svc.Create(ctx, p, draft())
	require.NoError(t, err)
	foreign := uuid.New()
	addMedia(uow, uuid.New(), foreign)
	for name, id := range map[string]uuid.UUID{"unknown": uuid.New(), "another workspace's": foreign} {
		t.Run(name, func(t *testing.T) {
			d := draft()
			d.MediaIDs = []uuid.UUID{knownMedia[1], id}
			_, err := svc.Create(ctx, p, d)
			requireReferenceNotFound(t, err, "media_ids[1]")
			_, err = svc.Update(ctx, p, existing.ID, existing.Revision, d)
			requireReferenceNotFound(t, err, "media_ids[1]")
		})
	}
	got, err := svc.Get(ctx, p, existing.ID)
	require.NoError(t, err)
	assert.Equal(t, existing, got, "refused saves change nothing")
	list, err := ports.Query(ctx, uow, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) ([]model.Product, error) {
		return tx.Products().List(ctx, ports.ListQuery{Limit: 10})
	})
	require.NoError(t, err)
	assert.Len(t, list, 1, "refused creates write nothing")
}

func requireReferenceNotFound(t *testing.T, err error, field string) {
	t.Helper()
	var de *domain.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, domain.CodeReferenceNotFound, de.Code, "%v", err)
	assert.Equal(t, field, de.Field)
}
