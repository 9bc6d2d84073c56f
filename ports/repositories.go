package ports

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// Resources is what every repository of a resource the API lists does
// alike: Create writes a new row (domain.CodeConflict if its id exists;
// each repository names the other refusals of its table), Get reads one by
// id of the transaction's workspace (domain.CodeNotFound otherwise) and
// List returns a page of the workspace's rows matching q, newest first
// (see ListQuery).
type Resources[T any] interface {
	Create(ctx context.Context, row T) error
	Get(ctx context.Context, id uuid.UUID) (T, error)
	List(ctx context.Context, q ListQuery) ([]T, error)
}

// WorkspaceRepository stores workspaces. Bound to a transaction whose
// workspace context is the workspace being read or created.
type WorkspaceRepository interface {
	// Create writes w; domain.CodeConflict if its id exists.
	Create(ctx context.Context, w model.Workspace) error
	// Get returns the workspace; domain.CodeNotFound otherwise.
	Get(ctx context.Context, id uuid.UUID) (model.Workspace, error)
}

// MemberRepository stores workspace memberships.
type MemberRepository interface {
	// Add writes m; domain.CodeConflict if the user is already a member.
	Add(ctx context.Context, m model.Member) error
	// Get returns the membership of user in the transaction's workspace;
	// domain.CodeNotFound if there is none.
	Get(ctx context.Context, user uuid.UUID) (model.Member, error)
	// List returns a page of the workspace's members in user id order:
	// those whose user id is greater than q.StartingAfter (uuid.Nil: from
	// the first), at most q.Limit of them. The order is the user id's, not
	// the membership's age, so a page boundary stays put when the member
	// it names is removed between two pages. q's filters do not apply.
	List(ctx context.Context, q ListQuery) ([]model.Member, error)
	// Remove deletes the membership of user; domain.CodeNotFound if there is
	// none, domain.CodeInvalidState if user is the workspace's last admin.
	// The check holds against concurrent removals: of two transactions
	// removing the last two admins, one fails.
	Remove(ctx context.Context, user uuid.UUID) error
}

// StoreRepository stores connected marketplace stores. Create
// (Resources) is domain.CodeStoreExists if the workspace already has a
// store for the same platform and external shop id, domain.CodeConflict
// if the id exists.
type StoreRepository interface {
	Resources[model.Store]
	// Update replaces the mutable fields (name, status, credential version,
	// sealed credentials, updated_at); domain.CodeNotFound if absent.
	Update(ctx context.Context, s model.Store) error
}

// ErrOperationFinished is the cause of the error OperationRepository.Update
// returns for an operation that ended already: the caller lost a race to
// record its outcome (a concurrent delivery of the same job recorded one
// first) and its own must be dropped.
var ErrOperationFinished = errors.New("operation already finished")

// ErrOperationStarted is the cause of the error OperationRepository.Update
// returns for a cancel of an operation whose job started first (it is
// running, and no cancel was requested of it): the cancel becomes a
// request (RequestCancel).
var ErrOperationStarted = errors.New("operation already started")

// OperationRepository stores user-visible operations.
type OperationRepository interface {
	// Create writes op; domain.CodeConflict if its id exists.
	Create(ctx context.Context, op model.Operation) error
	// Get returns the operation; domain.CodeNotFound otherwise.
	Get(ctx context.Context, id uuid.UUID) (model.Operation, error)
	// Update replaces status, error and updated_at; domain.CodeNotFound if
	// absent. A finished operation (succeeded, failed or cancelled) keeps
	// its outcome: the one change it takes is a reopen, failed back to
	// pending. Any other update of a finished operation changes nothing
	// and is ErrOperationFinished (domain.CodeInvalidState), whatever the
	// caller read before: the check is made on the stored row as it is
	// written, so of two transactions ending one operation at once the
	// second fails (where the database locks the row it waits for the
	// first and sees its outcome; an adapter that cannot wait refuses at
	// once with domain.CodeUnavailable while the first is open). A cancel
	// (status cancelled) is taken by a pending operation, or by a running
	// one whose cancel was requested (its job stopping at it); a running
	// one without the request changes nothing and is ErrOperationStarted
	// (domain.CodeInvalidState), checked the same way: of a cancel and a
	// job's start, the second sees the first. Every end of an operation
	// goes through Update. In a transaction marked WithRefusalsAtCommit
	// the refusal may come from Transact instead.
	Update(ctx context.Context, op model.Operation) error
	// RequestCancel records a user's cancel of the running operation id:
	// CancelRequestedAt and updated_at = now, unless the request is on
	// record already. An operation that is not running is left as it is.
	// It returns the operation as stored after; domain.CodeNotFound if
	// absent. It takes the row's lock as Update does.
	RequestCancel(ctx context.Context, id uuid.UUID, now time.Time) (model.Operation, error)
	// List returns a page of this workspace's operations matching q
	// (status and kind), newest first, as every list does (ListQuery).
	List(ctx context.Context, q ListQuery) ([]model.Operation, error)
}
