package httpapi

import (
	"context"
	"fmt"
	"reflect"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/pagination"
	"github.com/oncehq/once/ports"
)

// ListParams are the paging parameters of every list.
type ListParams struct {
	Limit         int       `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	StartingAfter uuid.UUID `query:"starting_after" format:"uuid" doc:"Cursor: the id of the last item of the previous page; the page holds older items"`
}

// ListOf is one page of a list, newest first.
type ListOf[T any] struct {
	Items   []T  `json:"items"`
	HasMore bool `json:"has_more" doc:"Older items exist: ask again with starting_after = the id of the last item"`
}

type ListOutput[T any] struct {
	Body ListOf[T]
}

// The input of a list operation is ListParams and its filters, each named
// like the ports.ListQuery field it fills (Status, StoreID...): listFilters
// finds them once, at registration, and listQuery copies them.

// listFilters are the query parameters of the list input I, which
// ports.ListQuery has too, by name and type. A query parameter it has not
// would be dropped silently, so registration panics on one (and every test
// that builds the API fails).
func listFilters[I any]() []string {
	var names []string
	for _, f := range reflect.VisibleFields(reflect.TypeFor[I]()) {
		if f.Tag.Get("query") == "" {
			continue
		}
		if q, ok := reflect.TypeFor[ports.ListQuery]().FieldByName(f.Name); !ok || q.Type != f.Type {
			panic(fmt.Sprintf("list input %T: query parameter %s has no ports.ListQuery field of its name and type", *new(I), f.Name))
		}
		names = append(names, f.Name)
	}
	return names
}

// listQuery is the ports.ListQuery of in, a list input whose filters are
// named.
func listQuery(in any, filters []string) ports.ListQuery {
	var q ports.ListQuery
	from, to := reflect.ValueOf(in).Elem(), reflect.ValueOf(&q).Elem()
	for _, name := range filters {
		to.FieldByName(name).Set(from.FieldByName(name))
	}
	return q
}

// lister is a repository that lists its rows (ports.Resources).
type lister[T any] interface {
	List(ctx context.Context, q ports.ListQuery) ([]T, error)
}

// registerList registers one list endpoint needing scope: GET path, newest first, paged
// by limit and starting_after, filtered by what the input I declares, over
// the List of the repository repo picks in the transaction (e.g.
// ports.Repository[ports.SyncRepository]).
func registerList[I, T, W any, R lister[T]](api huma.API, h *handlers, scope model.Scope, operationID, path, summary, tag, description string,
	repo func(ports.Tx) R, render func(T) W,
) {
	op := needs(scope, get(operationID, path, tag, summary,
		description+" Newest first; pass the id of the last item as starting_after for the next page while has_more is true.",
		401, 403, 422, 500, 503))
	list := func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]T, error) { return repo(tx).List }
	filters := listFilters[I]()
	huma.Register(api, op, func(ctx context.Context, in *I) (*ListOutput[W], error) {
		p, err := principalFrom(ctx)
		if err != nil {
			return nil, toProblem(ctx, err)
		}
		page, err := pagination.List(ctx, h.deps.Lists, p, listQuery(in, filters), list)
		if err != nil {
			return nil, toProblem(ctx, err)
		}
		return listOutput(page, render), nil
	})
}

// listOutput is page, each item shown by render.
func listOutput[T, W any](page pagination.Page[T], render func(T) W) *ListOutput[W] {
	out := &ListOutput[W]{Body: ListOf[W]{Items: make([]W, 0, len(page.Items)), HasMore: page.HasMore}}
	for _, v := range page.Items {
		out.Body.Items = append(out.Body.Items, render(v))
	}
	return out
}

// ListTasksInput filters a list of background tasks by state.
type ListTasksInput struct {
	ListParams
	Status string `query:"status" enum:"pending,running,succeeded,failed" doc:"Only tasks in this state"`
}

// deprecateListParameter marks a parameter of the registered list at path
// deprecated in the spec (huma's deprecated tag marks only its schema), so
// generated clients flag it too.
func deprecateListParameter(api huma.API, path, name string) {
	for _, p := range api.OpenAPI().Paths[path].Get.Parameters {
		if p.Name == name {
			p.Deprecated = true
			return
		}
	}
	panic(fmt.Sprintf("GET %s has no parameter %s to deprecate", path, name))
}
