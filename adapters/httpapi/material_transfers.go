package httpapi

import (
	"context"

	"github.com/danielgtaylor/huma/v2"

	"github.com/oncehq/once/domain/materials"
	"github.com/oncehq/once/domain/model"
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
	TaskHead
	Items []MaterialItem `json:"items"`
	TaskTimes
}

func toMaterialTransfer(t model.MaterialTransfer) MaterialTransfer {
	items := make([]MaterialItem, 0, len(t.Items))
	for _, it := range t.Items {
		items = append(items, MaterialItem{Index: it.Index, Done: it.Done, SizeBytes: it.SizeBytes})
	}
	return MaterialTransfer{TaskHead: taskHead(t.TaskState), Items: items, TaskTimes: taskTimes(t.TaskState)}
}

// MaterialTransferAccepted is the answer to the request that starts one (202 Accepted).
type MaterialTransferAccepted struct {
	Transfer MaterialTransfer `json:"transfer"`
	OperationAccepted
}

var _ = registerKindRoutes((*handlers).registerMaterialTransfers)

func (h *handlers) registerMaterialTransfers(api huma.API) {
	transfers := taskService[*materials.Service](h)
	registerTask(h, api, materials.Kind, needs(model.ScopeMediaWrite, post("startMaterialTransfer", "/v1/material-transfers", "materials", "Transfer collected material into our storage",
		"Accepted at once; the copy runs in the background, item by item, and resumes where it stopped after a crash without duplicating objects. Idempotent.",
		400, 401, 403, 409, 413, 422, 500, 503)), taskAt("/v1/material-transfers/"),
		func(ctx context.Context, tx ports.Tx, p model.Principal, in *StartMaterialTransferInput) (MaterialTransferAccepted, model.Operation, error) {
			t, op, err := transfers.Start(ctx, tx, p, in.Body.SourceURLs)
			return MaterialTransferAccepted{Transfer: toMaterialTransfer(t), OperationAccepted: accepted(op)}, op, err
		})
	registerRead(api, model.ScopeMediaRead, "getMaterialTransfer", "/v1/material-transfers/{id}", "Read a material transfer", "materials", transfers.Get, toMaterialTransfer)
	registerList[ListTasksInput](api, h, model.ScopeMediaRead, "listMaterialTransfers", "/v1/material-transfers", "List material transfers", "materials", "The workspace's material transfers, without their items (GET one transfer for them).", ports.Repository[ports.MaterialTransferRepository], toMaterialTransfer)
}

// check resolves the sources' hosts, which waits on DNS.
func (in *StartMaterialTransferInput) check(ctx context.Context, h *handlers) error {
	return taskService[*materials.Service](h).CheckSources(ctx, in.Body.SourceURLs)
}
