package materials

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/fetchpolicy"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Task is a material transfer as the steps every job shares see it.
var Task = jobs.TaskTable[model.MaterialTransfer](kinds.MaterialTransfer, func(tx ports.Tx) transfers { return transfers{ports.Repository[ports.MaterialTransferRepository](tx)} })

// Kind is the material transfer (names and failure hook), listed with
// its use case and worker handler in app/kind_list.go.
var Kind = Task.Kind()

// transfers saves a transfer's status, reason and updated_at (its items
// are recorded one by one, by MarkItemDone).
type transfers struct {
	ports.MaterialTransferRepository
}

func (r transfers) Update(ctx context.Context, t model.MaterialTransfer) error {
	return r.UpdateStatus(ctx, t)
}

// Limits of a transfer request.
const (
	MaxItems     = 50
	MaxURLLength = 2048
)

// Service starts and reads material transfers.
type Service struct {
	jobs.Starter
	policy   fetchpolicy.Policy
	resolver ports.HostResolver
}

// NewService builds the service. policy says which source URLs may be
// fetched; resolver resolves their hosts when a request is checked.
func NewService(uow ports.UnitOfWork, clock ports.Clock, ids ports.IDGenerator, policy fetchpolicy.Policy, resolver ports.HostResolver) *Service {
	return &Service{Starter: jobs.Starter{UOW: uow, Clock: clock, IDs: ids}, policy: policy, resolver: resolver}
}

// Start writes, in tx, a pending transfer of sourceURLs (one item each, in
// order), the operation that tracks it and the material.transfer event. It
// runs inside the caller's transaction so the idempotency record commits
// with it. The URLs stay in the transfer's rows: the event carries ids only,
// since a URL may be signed.
//
// Start checks the URLs' form (see CheckSources) but resolves nothing: it
// runs inside the business transaction, which must not wait on DNS. Callers
// run CheckSources first.
//
// Errors: CodeValidation as CheckSources's form checks; what the
// repositories return.
func (s *Service) Start(ctx context.Context, tx ports.Tx, p model.Principal, sourceURLs []string) (model.MaterialTransfer, model.Operation, error) {
	targets, err := s.checkForms(sourceURLs)
	if err != nil {
		return model.MaterialTransfer{}, model.Operation{}, err
	}
	transfer := model.MaterialTransfer{TaskState: s.NewTask(p), Items: make([]model.MaterialItem, len(sourceURLs))}
	for i, u := range sourceURLs {
		transfer.Items[i] = model.MaterialItem{Index: i, SourceURL: u}
	}
	return Task.Begin(ctx, tx, s.IDs, p, transfer, TransferRoute(targets[0].URL),
		func(op model.JobOperation) any {
			return model.MaterialTransferRun{TransferID: transfer.ID, JobOperation: op}
		})
}

// Get reads one transfer of the caller's workspace with its items.
//
// Errors: CodeNotFound if the workspace has no such transfer.
func (s *Service) Get(ctx context.Context, p model.Principal, id uuid.UUID) (model.MaterialTransfer, error) {
	return Task.Read(ctx, s.UOW, p, id)
}

// resolveBudget bounds the DNS lookups of one request: a request naming
// slow hosts gets 503 rather than holding its connection.
const resolveBudget = 3 * time.Second

// CheckSources says whether sourceURLs may be accepted for a transfer:
// 1 to MaxItems URLs of at most MaxURLLength bytes, each an absolute http or
// https URL without user information whose host is a public address, or a
// name that resolves to public addresses only (fetchpolicy; the operator's
// allow-lists open ranges and hosts). A name that does not resolve passes:
// there is nothing to reach, and the fetcher checks the address it dials
// anyway, which is what stops a name that changes its answer later.
//
// Errors: CodeValidation naming the first refused item by its index
// (Error.Field "source_urls[i]"), never repeating the URL, which may be
// signed; CodeUnavailable when a host cannot be resolved now.
func (s *Service) CheckSources(ctx context.Context, sourceURLs []string) error {
	targets, err := s.checkForms(sourceURLs)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, resolveBudget)
	defer cancel()
	resolved := map[string]bool{}
	for i, t := range targets {
		if !t.NeedsLookup() || resolved[t.Host] {
			continue
		}
		resolved[t.Host] = true
		addrs, err := s.resolver.LookupHost(ctx, t.Host)
		if err != nil {
			return &domain.Error{Code: domain.CodeUnavailable, Err: err,
				Message: fmt.Sprintf("the host of source_urls[%d] cannot be resolved now; retry later", i)}
		}
		for _, addr := range addrs {
			var refusal *fetchpolicy.AddrRefusal
			if errors.As(s.policy.CheckAddr(addr), &refusal) {
				return invalidItem(i, "has a host that resolves to "+refusal.Range+", which may not be fetched; only public addresses may")
			}
		}
	}
	return nil
}

// checkForms checks what needs no network: the count, the lengths, and
// each URL against the fetch policy.
func (s *Service) checkForms(urls []string) ([]fetchpolicy.Target, error) {
	if len(urls) == 0 || len(urls) > MaxItems {
		return nil, &domain.Error{Code: domain.CodeValidation, Field: "source_urls",
			Message: fmt.Sprintf("source_urls must hold 1 to %d URLs", MaxItems)}
	}
	targets := make([]fetchpolicy.Target, len(urls))
	for i, raw := range urls {
		if len(raw) > MaxURLLength {
			return nil, invalidItem(i, fmt.Sprintf("is longer than %d characters", MaxURLLength))
		}
		t, err := s.policy.CheckURL(raw)
		if err != nil {
			return nil, invalidItem(i, err.Error())
		}
		targets[i] = t
	}
	return targets, nil
}

// invalidItem names item i and says what is wrong with it; the URL itself
// is never repeated.
func invalidItem(i int, reason string) error {
	field := fmt.Sprintf("source_urls[%d]", i)
	return &domain.Error{Code: domain.CodeValidation, Field: field, Message: field + " " + reason}
}
