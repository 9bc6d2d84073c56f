// Package pagination is the one use case behind every list endpoint: a page of
// a workspace's resources, newest first, with a cursor and has_more.
package pagination

import (
	"context"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Page sizes: a request without a limit gets DefaultLimit; more than
// MaxLimit is refused.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Service reads pages in the caller's workspace.
type Service struct {
	uow ports.UnitOfWork
}

func NewService(uow ports.UnitOfWork) *Service { return &Service{uow: uow} }

// Page is one page, newest first. HasMore says older items exist: ask again
// with StartingAfter = the id of the last item.
type Page[T any] struct {
	Items   []T
	HasMore bool
}

// Lister picks the repository's List in a transaction.
type Lister[T any] func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]T, error)

// List reads one page for p's workspace. It asks the repository for one
// item more than the page to learn whether there are more.
func List[T any](ctx context.Context, s *Service, p model.Principal, q ports.ListQuery, list Lister[T]) (Page[T], error) {
	switch {
	case q.Limit == 0:
		q.Limit = DefaultLimit
	case q.Limit < 0 || q.Limit > MaxLimit:
		return Page[T]{}, domain.Errorf(domain.CodeValidation, "limit must be between 1 and %d", MaxLimit)
	}
	limit := q.Limit
	q.Limit++
	items, err := ports.Query(ctx, s.uow, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) ([]T, error) {
		return list(tx)(ctx, q)
	})
	if err != nil {
		return Page[T]{}, err
	}
	page := Page[T]{Items: items, HasMore: len(items) > limit}
	if page.HasMore {
		page.Items = items[:limit]
	}
	if page.Items == nil {
		page.Items = []T{}
	}
	return page, nil
}
