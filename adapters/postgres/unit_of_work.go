package postgres

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// setWorkspace is the first statement of every transaction. The third
// argument (is_local = true) scopes it to the transaction: a pooled
// connection never carries one workspace's context into another's
// transaction (afterwards the setting reads ”, which the policies turn into
// "no rows").
const setWorkspace = `SELECT set_config('app.workspace_id', ?, true)`

// UnitOfWork runs use cases in one transaction of one workspace, as the
// application role, under row-level security.
type UnitOfWork struct {
	db *bun.DB
}

var _ ports.UnitOfWork = (*UnitOfWork)(nil)

// NewUnitOfWork returns a UnitOfWork on db, which must be connected as the
// application role.
func NewUnitOfWork(db *bun.DB) *UnitOfWork { return &UnitOfWork{db: db} }

// Transact implements ports.UnitOfWork.
func (u *UnitOfWork) Transact(ctx context.Context, workspace uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) error {
	if workspace == uuid.Nil {
		return domain.Errorf(domain.CodeValidation, "a transaction needs a workspace")
	}
	var fnErr error
	fnCalled := false
	err := u.db.RunInTx(ctx, nil, func(ctx context.Context, btx bun.Tx) error {
		if _, err := btx.ExecContext(ctx, setWorkspace, workspace.String()); err != nil {
			return unavailableError(err)
		}
		fnCalled = true
		// A panic in fn propagates; RunInTx's deferred rollback undoes the
		// transaction on the way out.
		fnErr = fn(ctx, newTx(btx, workspace))
		return fnErr
	})
	if fnCalled && fnErr != nil {
		return fnErr // unchanged, as the port promises
	}
	if err != nil {
		// begin, set_config or commit failed: nothing was committed (or the
		// outcome is unknown); a retry with the same key is safe.
		return unavailableError(err)
	}
	return nil
}

// Tx is one transaction of one workspace and the repositories bound to it.
type Tx struct {
	workspaces   *WorkspaceRepository
	members      *MemberRepository
	idempotency  *IdempotencyStore
	outbox       *Outbox
	dispatch     *OutboxDispatch
	operations   *OperationRepository
	stores       *StoreRepository
	products     *ProductRepository
	media        *MediaRepository
	transfers    *MaterialTransferRepository
	publications *PublicationRepository
	syncs        *SyncRepository
	aiTasks      *AITaskRepository
}

var _ ports.Tx = (*Tx)(nil)

func newTx(db bun.IDB, workspace uuid.UUID) *Tx {
	return &Tx{
		workspaces:   &WorkspaceRepository{db: db, workspace: workspace},
		members:      &MemberRepository{db: db, workspace: workspace},
		idempotency:  &IdempotencyStore{db: db, workspace: workspace, claimed: map[domain.IdempotencyScope]bool{}},
		outbox:       &Outbox{db: db, workspace: workspace},
		dispatch:     &OutboxDispatch{db: db, workspace: workspace},
		operations:   &OperationRepository{db: db, workspace: workspace},
		stores:       &StoreRepository{db: db, workspace: workspace},
		products:     &ProductRepository{db: db, workspace: workspace},
		media:        &MediaRepository{db: db, workspace: workspace},
		transfers:    &MaterialTransferRepository{db: db, workspace: workspace},
		publications: &PublicationRepository{db: db, workspace: workspace},
		syncs:        &SyncRepository{db: db, workspace: workspace},
		aiTasks:      &AITaskRepository{db: db, workspace: workspace},
	}
}

func (t *Tx) Workspaces() ports.WorkspaceRepository { return t.workspaces }
func (t *Tx) Members() ports.MemberRepository       { return t.members }
func (t *Tx) Idempotency() ports.IdempotencyStore   { return t.idempotency }
func (t *Tx) Outbox() ports.Outbox                  { return t.outbox }
func (t *Tx) OutboxDispatch() ports.OutboxDispatch  { return t.dispatch }
func (t *Tx) Operations() ports.OperationRepository { return t.operations }
func (t *Tx) Stores() ports.StoreRepository         { return t.stores }
func (t *Tx) Products() ports.ProductRepository     { return t.products }
func (t *Tx) Media() ports.MediaRepository          { return t.media }
func (t *Tx) MaterialTransfers() ports.MaterialTransferRepository {
	return t.transfers
}
func (t *Tx) Publications() ports.PublicationRepository { return t.publications }
func (t *Tx) Syncs() ports.SyncRepository               { return t.syncs }
func (t *Tx) AITasks() ports.AITaskRepository           { return t.aiTasks }
