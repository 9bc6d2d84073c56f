package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

type StartMaterialTransferRequest struct {
	SourceURLs []string `json:"source_urls" minItems:"1" maxItems:"50" doc:"Where the collector found the files: http or https URLs without user information, on public addresses only (loopback, private, link-local and other special ranges are refused, also when a host name resolves to one)"`
}

type StartMaterialTransferInput struct {
	IdempotencyKeyHeader
	RawBody []byte
	Body    StartMaterialTransferRequest
}

// MaterialItem is one file of a transfer. Source URLs are not echoed back:
// they may carry signatures.
type MaterialItem struct {
	Index     int   `json:"index"`
	Done      bool  `json:"done"`
	SizeBytes int64 `json:"size_bytes,omitempty"`
}

type MaterialTransfer struct {
	ID          uuid.UUID      `json:"id" format:"uuid"`
	OperationID uuid.UUID      `json:"operation_id" format:"uuid"`
	Status      string         `json:"status" enum:"pending,running,succeeded,failed"`
	Items       []MaterialItem `json:"items"`
	Reason      string         `json:"reason,omitempty"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

type MaterialTransferAccepted struct {
	Transfer  MaterialTransfer `json:"transfer"`
	Operation Operation        `json:"operation"`
}

func toMaterialTransfer(t domain.MaterialTransfer) MaterialTransfer {
	items := make([]MaterialItem, 0, len(t.Items))
	for _, it := range t.Items {
		items = append(items, MaterialItem{Index: it.Index, Done: it.Done, SizeBytes: it.SizeBytes})
	}
	return MaterialTransfer{ID: t.ID, OperationID: t.OperationID, Status: string(t.Status), Items: items,
		Reason: t.Reason, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
}

func (h *handlers) registerMaterialTransfers(api huma.API) {
	registerIdempotent(api, huma.Operation{
		OperationID:   "startMaterialTransfer",
		Method:        http.MethodPost,
		Path:          "/v1/material-transfers",
		Summary:       "Transfer collected material into our storage",
		Description:   "Accepted at once; the copy runs in the background, item by item, and resumes where it stopped after a crash without duplicating objects. Idempotent.",
		Tags:          []string{"materials"},
		DefaultStatus: http.StatusAccepted,
		Security:      bearer,
		Errors:        []int{400, 401, 403, 409, 413, 422, 500, 503},
	}, h.deps.MaxBodyBytes, h.startMaterialTransfer)
	registerRead(api, "getMaterialTransfer", "/v1/material-transfers/{id}", "Read a material transfer", "materials", h.deps.Materials.Get, toMaterialTransfer)
}

func (h *handlers) startMaterialTransfer(ctx context.Context, in *StartMaterialTransferInput) (*IdempotentOutput[MaterialTransferAccepted], error) {
	// Resolving the sources' hosts waits on DNS: done before the
	// idempotency claim opens a transaction, never inside it.
	if err := h.deps.Materials.CheckSources(ctx, in.Body.SourceURLs); err != nil {
		return nil, toProblem(ctx, err)
	}
	return runIdempotent(ctx, h.deps.Idempotency, in.RawBody,
		func(ctx context.Context, tx ports.Tx, p domain.Principal) (int, string, MaterialTransferAccepted, error) {
			t, op, err := h.deps.Materials.Start(ctx, tx, p, in.Body.SourceURLs)
			if err != nil {
				return 0, "", MaterialTransferAccepted{}, err
			}
			return http.StatusAccepted, "/v1/material-transfers/" + t.ID.String(),
				MaterialTransferAccepted{Transfer: toMaterialTransfer(t), Operation: toOperation(op)}, nil
		})
}
