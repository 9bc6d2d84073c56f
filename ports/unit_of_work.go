package ports

import (
	"context"
	"reflect"

	"github.com/google/uuid"
)

// UnitOfWork runs a function in one transaction scoped to one workspace.
type UnitOfWork interface {
	// Transact runs fn in a single transaction for workspace. The row-level
	// security context (app.workspace_id) is set before fn sees the
	// transaction, so fn can only read and write that workspace's rows. If fn
	// returns an error, everything it wrote is rolled back and the error is
	// returned unchanged; if fn panics, the transaction is rolled back and the
	// panic propagates; otherwise the transaction commits and a
	// commit failure is returned as a domain error (CodeUnavailable). So
	// is a commit the store made but cannot confirm as durable (its wait
	// for a synchronous standby was cancelled): its outcome is unknown,
	// and nothing may be done as if it had succeeded.
	//
	// The tx-bound repositories must not be used after fn returns. A nil
	// workspace is refused with domain.CodeValidation before anything runs.
	Transact(ctx context.Context, workspace uuid.UUID, fn func(ctx context.Context, tx Tx) error) error
}

// Tx hands a use case the repositories bound to one transaction.
type Tx interface {
	Workspaces() WorkspaceRepository
	Members() MemberRepository
	Idempotency() IdempotencyStore
	Outbox() Outbox
	OutboxDispatch() OutboxDispatch
	Operations() OperationRepository
	Stores() StoreRepository
	Products() ProductRepository
	Media() MediaRepository
	// KindRepository is the repository of the port whose type is port,
	// for a kind of task; nil if the adapter has none. Read it through
	// Repository, which names the port as a type.
	KindRepository(port reflect.Type) any
	// PrefetchJob reads a job's outbox event, its operation and the store
	// the operation tracks, if it tracks one, together, before its caller
	// reads them one by one: a job's first transaction starts with exactly
	// those reads (the message checked against its event, the operation,
	// a verification's store), and on PostgreSQL they go in the round
	// trip of the transaction's BEGIN instead of one each. Each row found
	// is handed, as read then, to the first Outbox().Get,
	// Operations().Get or Stores().Get of its id in the transaction, and
	// only to that one: a later read reads again. A row not found is left
	// to its Get, which reads it as usual. An adapter that gains nothing
	// by it does nothing.
	PrefetchJob(ctx context.Context, event, operation uuid.UUID) error
	// PrefetchJobEnd is PrefetchJob for a job's last transaction, which
	// reads its operation and its store again (they may have moved on
	// during the call) and, when it ends the operation, asks whether the
	// workspace has an enabled webhook endpoint to announce the end to
	// (webhooks.OperationEnded): those three in one round trip, the
	// answer to the last kept for that question in the transaction.
	PrefetchJobEnd(ctx context.Context, operation uuid.UUID) error
}

// WithRefusalsAtCommit marks ctx for a transaction whose function returns
// a refused write's error as it is and makes no other write after it (a
// job's steps: jobs.Handler). In it an adapter may report the refusals
// OperationRepository.Update and StoreRepository.Update would return
// (ports.ErrOperationFinished, domain.CodeNotFound) from Transact instead,
// when the transaction commits, the transaction rolled back all the
// same: on PostgreSQL the transaction's last writes then go in its
// COMMIT's round trip. It may also read what PrefetchJob and
// PrefetchJobEnd read in a transaction of their own, and commit the
// writes with other such transactions' (PostgreSQL batches them across
// jobs): the function must not rely on those reads and its writes being
// one snapshot, which READ COMMITTED never promised, as those writes
// check again what they depend on.
func WithRefusalsAtCommit(ctx context.Context) context.Context {
	return context.WithValue(ctx, refusalsAtCommitKey{}, true)
}

// RefusalsAtCommit reports whether ctx was marked by WithRefusalsAtCommit.
func RefusalsAtCommit(ctx context.Context) bool {
	at, _ := ctx.Value(refusalsAtCommitKey{}).(bool)
	return at
}

type refusalsAtCommitKey struct{}
