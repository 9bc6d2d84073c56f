package materials

import (
	"context"
	"net/url"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// Limits of a transfer request.
const (
	MaxItems     = 50
	MaxURLLength = 2048
)

// Service starts and reads material transfers.
type Service struct {
	uow   ports.UnitOfWork
	clock ports.Clock
	ids   ports.IDGenerator
}

func NewService(uow ports.UnitOfWork, clock ports.Clock, ids ports.IDGenerator) *Service {
	return &Service{uow: uow, clock: clock, ids: ids}
}

// Start writes, in tx, a pending transfer of sourceURLs (one item each, in
// order), the operation that tracks it and the material.transfer event. It
// runs inside the caller's transaction so the idempotency record commits
// with it. The URLs stay in the transfer's rows: the event carries ids only,
// since a URL may be signed.
//
// Errors: CodeValidation unless there are 1 to MaxItems URLs, each an
// absolute http(s) URL with a host of at most MaxURLLength bytes (the
// message names the index, never the URL); what the repositories return.
func (s *Service) Start(ctx context.Context, tx ports.Tx, p domain.Principal, sourceURLs []string) (domain.MaterialTransfer, domain.Operation, error) {
	if err := validateURLs(sourceURLs); err != nil {
		return domain.MaterialTransfer{}, domain.Operation{}, err
	}
	now := s.clock.Now()
	transfer := domain.MaterialTransfer{
		ID:          s.ids.NewID(),
		WorkspaceID: p.WorkspaceID,
		Status:      domain.TaskPending,
		Items:       make([]domain.MaterialItem, len(sourceURLs)),
		CreatedAt:   now,
		UpdatedAt:   now,
	}
	for i, u := range sourceURLs {
		transfer.Items[i] = domain.MaterialItem{Index: i, SourceURL: u}
	}
	op, err := Task.Begin(ctx, tx, s.ids, p, now, &transfer, transfer.ID, &transfer.OperationID, ResourceType, domain.EventMaterialTransfer,
		func(opID uuid.UUID) any {
			return domain.MaterialTransferRun{TransferID: transfer.ID, OperationID: opID}
		}, tx.MaterialTransfers().Create)
	if err != nil {
		return domain.MaterialTransfer{}, domain.Operation{}, err
	}
	return transfer, op, nil
}

// ResourceType names transfers in operations and outbox events.
const ResourceType = "material_transfer"

// Get reads one transfer of the caller's workspace with its items.
//
// Errors: CodeNotFound if the workspace has no such transfer.
func (s *Service) Get(ctx context.Context, p domain.Principal, id uuid.UUID) (domain.MaterialTransfer, error) {
	return Task.Read(ctx, s.uow, p, id)
}

func validateURLs(urls []string) error {
	if len(urls) == 0 || len(urls) > MaxItems {
		return domain.Errorf(domain.CodeValidation, "source_urls must hold 1 to %d URLs", MaxItems)
	}
	for i, raw := range urls {
		if len(raw) > MaxURLLength {
			return domain.Errorf(domain.CodeValidation, "source_urls[%d] is longer than %d characters", i, MaxURLLength)
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.Opaque != "" {
			return domain.Errorf(domain.CodeValidation, "source_urls[%d] must be an absolute http or https URL", i)
		}
	}
	return nil
}
