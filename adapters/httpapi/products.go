package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/products"
	"github.com/oncehq/once/ports"
)

// ProductDraft is what a client writes. Drafts are neither idempotent nor
// delivered by the outbox: concurrent edits are settled by revision and
// If-Match.
type ProductDraft struct {
	Title       string      `json:"title" minLength:"1" maxLength:"200"`
	Description string      `json:"description,omitempty" maxLength:"10000"`
	PriceMinor  int64       `json:"price_minor" minimum:"0" doc:"Price in the currency's minor unit (cents)"`
	Currency    string      `json:"currency" pattern:"^[A-Z]{3}$" example:"USD"`
	MediaIDs    []uuid.UUID `json:"media_ids,omitempty" format:"uuid" maxItems:"20" doc:"Images, in order"`
}

// Product is a draft as clients see it.
type Product struct {
	ID          uuid.UUID   `json:"id" format:"uuid"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	PriceMinor  int64       `json:"price_minor"`
	Currency    string      `json:"currency"`
	MediaIDs    []uuid.UUID `json:"media_ids" format:"uuid"`
	Revision    int         `json:"revision" doc:"Grows by one with every save. The ETag header carries it quoted (\"3\"); send that ETag back as If-Match to save."`
	CreatedAt   time.Time   `json:"created_at"`
	UpdatedAt   time.Time   `json:"updated_at"`
}

type CreateProductInput struct {
	Body ProductDraft
}

type ProductOutput struct {
	ETag     string `header:"ETag" doc:"The revision, as a strong entity tag; send it as If-Match to save"`
	Location string `header:"Location"`
	Body     Product
}

type GetProductInput struct {
	ID uuid.UUID `path:"id" format:"uuid"`
}

type UpdateProductInput struct {
	ID      uuid.UUID `path:"id" format:"uuid"`
	IfMatch string    `header:"If-Match" doc:"The ETag of the revision this edit is based on. A stale one gets 412 and changes nothing; none gets 428."`
	Body    ProductDraft
}

func toProduct(p model.Product) Product {
	media := p.MediaIDs
	if media == nil {
		media = []uuid.UUID{}
	}
	return Product{ID: p.ID, Title: p.Title, Description: p.Description, PriceMinor: p.PriceMinor, Currency: p.Currency,
		MediaIDs: media, Revision: p.Revision, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

func productOutput(p model.Product) *ProductOutput {
	return &ProductOutput{ETag: revisionETag(p.Revision), Body: toProduct(p)}
}

func toDraft(d ProductDraft) products.Draft {
	return products.Draft{Title: d.Title, Description: d.Description, PriceMinor: d.PriceMinor, Currency: d.Currency, MediaIDs: d.MediaIDs}
}

// revisionETag is the strong entity tag of a revision.
func revisionETag(revision int) string { return `"` + strconv.Itoa(revision) + `"` }

// parseIfMatch reads the revision out of If-Match: one strong tag made by
// revisionETag. A missing header is 428; anything else that is not one of
// our tags cannot match, so it is 412.
func parseIfMatch(header string) (int, error) {
	h := strings.TrimSpace(header)
	if h == "" {
		return 0, domain.Errorf(domain.CodePreconditionRequired, "send If-Match with the ETag of the revision you edited")
	}
	if len(h) >= 2 && h[0] == '"' && h[len(h)-1] == '"' {
		if n, err := strconv.Atoi(h[1 : len(h)-1]); err == nil && n > 0 {
			return n, nil
		}
	}
	return 0, domain.Errorf(domain.CodePreconditionFailed, "If-Match does not match the current revision")
}

type ListProductsInput struct {
	ListParams
}

func (h *handlers) registerProducts(api huma.API) {
	create := needs(model.ScopeProductsWrite, created(post("createProduct", "/v1/products", "products", "Create a product draft", "", 401, 403, 413, 422, 500, 503)))
	create.MaxBodyBytes = h.deps.MaxBodyBytes
	huma.Register(api, create, h.createProduct)
	huma.Register(api, needs(model.ScopeProductsRead, get("getProduct", "/v1/products/{id}", "products", "Read a product draft", "", 401, 403, 404, 422, 500, 503)), h.getProduct)
	huma.Register(api, needs(model.ScopeProductsWrite, huma.Operation{
		OperationID:  "updateProduct",
		Method:       http.MethodPut,
		Path:         "/v1/products/{id}",
		Summary:      "Save a product draft",
		Description:  "Replaces the draft if If-Match names its current revision; a stale revision gets 412 and changes nothing.",
		Tags:         []string{"products"},
		Security:     bearer,
		MaxBodyBytes: h.deps.MaxBodyBytes,
		Errors:       []int{401, 403, 404, 412, 413, 422, 428, 500, 503},
	}), h.updateProduct)
	markHeaderRequired(api, http.MethodPut, "/v1/products/{id}", "If-Match")
	registerList[ListProductsInput](api, h, model.ScopeProductsRead, "listProducts", "/v1/products", "List products", "products", "The workspace's product drafts.", ports.Tx.Products, toProduct)
}

func (h *handlers) createProduct(ctx context.Context, in *CreateProductInput) (*ProductOutput, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	prod, err := h.deps.Products.Create(ctx, p, toDraft(in.Body))
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	out := productOutput(prod)
	out.Location = "/v1/products/" + prod.ID.String()
	return out, nil
}

func (h *handlers) getProduct(ctx context.Context, in *GetProductInput) (*ProductOutput, error) {
	return getOne(ctx, in.ID, h.deps.Products.Get, productOutput)
}

func (h *handlers) updateProduct(ctx context.Context, in *UpdateProductInput) (*ProductOutput, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	revision, err := parseIfMatch(in.IfMatch)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	prod, err := h.deps.Products.Update(ctx, p, in.ID, revision, toDraft(in.Body))
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	return productOutput(prod), nil
}
