package httpapi

import (
	"context"
	"net/http"

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

type ListStoresInput struct {
	ListParams
	Status   string `query:"status" enum:"pending_verification,verified,verification_failed" doc:"Only stores in this state"`
	Platform string `query:"platform" enum:"shopify,amazon,tiktok,shopee,lazada" doc:"Only stores on this marketplace"`
}

func (in ListStoresInput) listQuery() ports.ListQuery {
	q := in.page()
	q.Status, q.Platform = in.Status, in.Platform
	return q
}

type ListProductsInput struct {
	ListParams
}

func (in ListProductsInput) listQuery() ports.ListQuery { return in.page() }

type ListMediaInput struct {
	ListParams
	Status string `query:"status" enum:"awaiting_upload,processing,ready,rejected" doc:"Only media in this state"`
}

func (in ListMediaInput) listQuery() ports.ListQuery {
	q := in.page()
	q.Status = in.Status
	return q
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

type ListPublicationsInput struct {
	ListTasksInput
	StoreID   uuid.UUID `query:"store_id" format:"uuid" doc:"Only publications to this store"`
	ProductID uuid.UUID `query:"product_id" format:"uuid" doc:"Only publications of this product"`
}

func (in ListPublicationsInput) listQuery() ports.ListQuery {
	q := in.ListTasksInput.listQuery()
	q.StoreID, q.ProductID = in.StoreID, in.ProductID
	return q
}

type ListSyncsInput struct {
	ListTasksInput
	StoreID uuid.UUID `query:"store_id" format:"uuid" doc:"Only syncs of this store"`
}

func (in ListSyncsInput) listQuery() ports.ListQuery {
	q := in.ListTasksInput.listQuery()
	q.StoreID = in.StoreID
	return q
}

type ListAITasksInput struct {
	ListTasksInput
	ProductID uuid.UUID `query:"product_id" format:"uuid" doc:"Only tasks on this product"`
	Kind      string    `query:"kind" enum:"text,category,image" doc:"Only tasks of this kind"`
}

func (in ListAITasksInput) listQuery() ports.ListQuery {
	q := in.ListTasksInput.listQuery()
	q.ProductID, q.Kind = in.ProductID, in.Kind
	return q
}

func (h *handlers) registerLists(api huma.API) {
	registerList[ListStoresInput](api, h, huma.Operation{
		OperationID: "listStores", Path: "/v1/stores", Summary: "List stores", Tags: []string{"stores"},
		Description: "The workspace's stores.",
	}, func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.Store, error) {
		return tx.Stores().List
	}, toStore)
	registerList[ListProductsInput](api, h, huma.Operation{
		OperationID: "listProducts", Path: "/v1/products", Summary: "List products", Tags: []string{"products"},
		Description: "The workspace's product drafts.",
	}, func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.Product, error) {
		return tx.Products().List
	}, toProduct)
	registerList[ListMediaInput](api, h, huma.Operation{
		OperationID: "listMedia", Path: "/v1/media", Summary: "List media", Tags: []string{"media"},
		Description: "The workspace's media.",
	}, func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.Media, error) {
		return tx.Media().List
	}, toMedia)
	registerList[ListPublicationsInput](api, h, huma.Operation{
		OperationID: "listPublications", Path: "/v1/publications", Summary: "List publications", Tags: []string{"publishing"},
		Description: "The workspace's publications.",
	}, func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.Publication, error) {
		return tx.Publications().List
	}, toPublication)
	registerList[ListSyncsInput](api, h, huma.Operation{
		OperationID: "listCatalogSyncs", Path: "/v1/syncs", Summary: "List catalog syncs", Tags: []string{"stores"},
		Description: "The workspace's catalog syncs.",
	}, func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.CatalogSync, error) {
		return tx.Syncs().List
	}, toCatalogSync)
	registerList[ListTasksInput](api, h, huma.Operation{
		OperationID: "listMaterialTransfers", Path: "/v1/material-transfers", Summary: "List material transfers", Tags: []string{"materials"},
		Description: "The workspace's material transfers, without their items (GET one transfer for them).",
	}, func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.MaterialTransfer, error) {
		return tx.MaterialTransfers().List
	}, toMaterialTransfer)
	registerList[ListAITasksInput](api, h, huma.Operation{
		OperationID: "listAITasks", Path: "/v1/ai-tasks", Summary: "List AI tasks", Tags: []string{"ai"},
		Description: "The workspace's AI tasks.",
	}, func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.AITask, error) {
		return tx.AITasks().List
	}, toAITask)
}
