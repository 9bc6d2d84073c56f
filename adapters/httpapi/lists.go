package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/pagination"
	"github.com/oncehq/once/ports"
)

// ListParams are the paging parameters of every list.
type ListParams struct {
	Limit         int       `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	StartingAfter uuid.UUID `query:"starting_after" format:"uuid" doc:"Cursor: the id of the last item of the previous page; the page holds older items"`
}

func (l ListParams) page() ports.ListQuery {
	return ports.ListQuery{Limit: l.Limit, StartingAfter: l.StartingAfter}
}

// ListOf is one page of a list, newest first.
type ListOf[T any] struct {
	Items   []T  `json:"items"`
	HasMore bool `json:"has_more" doc:"Older items exist: ask again with starting_after = the id of the last item"`
}

type ListOutput[T any] struct {
	Body ListOf[T]
}

// listInput is the input of a list operation: paging plus its filters.
type listInput interface {
	listQuery() ports.ListQuery
}

// registerList registers one list endpoint: GET path, newest first, paged
// by limit and starting_after, filtered by what the input declares.
func registerList[I listInput, T, W any](api huma.API, h *handlers, op huma.Operation, list pagination.Lister[T], render func(T) W) {
	op.Method = http.MethodGet
	op.Security = bearer
	op.Errors = []int{401, 403, 422, 500, 503}
	op.Description += " Newest first; pass the id of the last item as starting_after for the next page while has_more is true."
	huma.Register(api, op, func(ctx context.Context, in *I) (*ListOutput[W], error) {
		p, err := principalFrom(ctx)
		if err != nil {
			return nil, toProblem(ctx, err)
		}
		page, err := pagination.List(ctx, h.deps.Lists, p, (*in).listQuery(), list)
		if err != nil {
			return nil, toProblem(ctx, err)
		}
		out := &ListOutput[W]{Body: ListOf[W]{Items: make([]W, 0, len(page.Items)), HasMore: page.HasMore}}
		for _, v := range page.Items {
			out.Body.Items = append(out.Body.Items, render(v))
		}
		return out, nil
	})
}

// ListTasksInput filters a list of background tasks by state.
type ListTasksInput struct {
	ListParams
	Status string `query:"status" enum:"pending,running,succeeded,failed" doc:"Only tasks in this state"`
}

func (in ListTasksInput) listQuery() ports.ListQuery {
	q := in.page()
	q.Status = in.Status
	return q
}
