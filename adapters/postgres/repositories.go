package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The repositories of one transaction. Every query also names the
// transaction's workspace explicitly: row-level security would filter
// anyway, but the explicit predicate documents intent and keeps the
// workspace-leading indexes in play.

// WorkspaceRepository implements ports.WorkspaceRepository.
type WorkspaceRepository struct {
	db        bun.IDB
	workspace uuid.UUID
}

var _ ports.WorkspaceRepository = (*WorkspaceRepository)(nil)

func (r *WorkspaceRepository) Create(ctx context.Context, w model.Workspace) error {
	_, err := r.db.NewInsert().Model(toWorkspaceRow(w)).Exec(ctx)
	return mapError(err, "workspace")
}

func (r *WorkspaceRepository) Get(ctx context.Context, id uuid.UUID) (model.Workspace, error) {
	return selectRow[model.Workspace, workspaceRow](ctx, r.db, "workspace", "id = ? AND id = ?", id, r.workspace)
}

// selectRow reads the one row of model R that where (with args) picks;
// CodeNotFound (naming noun) if there is none. getRow is its form for the
// tables keyed by workspace and id.
func selectRow[D, R any, P taskRow[R, D]](ctx context.Context, db bun.IDB, noun, where string, args ...any) (D, error) {
	var row R
	if err := db.NewSelect().Model(P(&row)).Where(where, args...).Scan(ctx); err != nil {
		var none D
		return none, mapError(err, noun)
	}
	return P(&row).domain(), nil
}

// MemberRepository implements ports.MemberRepository.
type MemberRepository struct {
	db        bun.IDB
	workspace uuid.UUID
}

var _ ports.MemberRepository = (*MemberRepository)(nil)

func (r *MemberRepository) Add(ctx context.Context, m model.Member) error {
	_, err := r.db.NewInsert().Model(toMemberRow(m)).Exec(ctx)
	return mapError(err, "member")
}

func (r *MemberRepository) List(ctx context.Context, q ports.ListQuery) ([]model.Member, error) {
	if q.Limit <= 0 {
		return []model.Member{}, nil
	}
	var rows []memberRow
	err := r.db.NewSelect().Model(&rows).Where("workspace_id = ?", r.workspace).
		Where("user_id > ?", q.StartingAfter).OrderExpr("user_id").Limit(int64(q.Limit)).Scan(ctx)
	if err != nil {
		return nil, mapError(err, "member")
	}
	out := make([]model.Member, 0, len(rows))
	for i := range rows {
		out = append(out, rows[i].domain())
	}
	return out, nil
}

// removeMember deletes a membership unless it is the workspace's last
// admin. Removing an admin first locks every admin row of the workspace
// (FOR UPDATE), so a concurrent removal of another admin waits, then counts
// again without the row deleted meanwhile: two removals cannot leave the
// workspace without an admin (write skew under READ COMMITTED otherwise).
const removeMember = `
WITH admins AS (
    SELECT user_id FROM workspace_members
     WHERE workspace_id = ? AND role = 'admin'
       FOR UPDATE
)
DELETE FROM workspace_members m
 WHERE m.workspace_id = ? AND m.user_id = ?
   AND (m.role <> 'admin' OR (SELECT count(*) FROM admins) > 1)`

func (r *MemberRepository) Remove(ctx context.Context, user uuid.UUID) error {
	res, err := r.db.ExecContext(ctx, removeMember, r.workspace, r.workspace, user)
	if err := affectedOne(res, err, "member"); !domain.IsCode(err, domain.CodeNotFound) {
		return err
	}
	if _, err := r.Get(ctx, user); err != nil {
		return err
	}
	return domain.Errorf(domain.CodeInvalidState, "the last admin of a workspace cannot be removed")
}

func (r *MemberRepository) Get(ctx context.Context, user uuid.UUID) (model.Member, error) {
	return selectRow[model.Member, memberRow](ctx, r.db, "member", "workspace_id = ? AND user_id = ?", r.workspace, user)
}

// OperationRepository implements ports.OperationRepository.
type OperationRepository struct {
	db        bun.IDB
	workspace uuid.UUID
	// endpoints hears from each UPDATE whether the workspace has an
	// enabled webhook endpoint; nil outside a Tx.
	endpoints *endpointPresence
	// prefetch holds the operation PrefetchJob read, if any; nil outside
	// a Tx.
	prefetch *jobPrefetch
	params   txParams
}

var _ ports.OperationRepository = (*OperationRepository)(nil)

func (r *OperationRepository) Create(ctx context.Context, op model.Operation) error {
	_, err := r.db.NewInsert().Model(toOperationRow(op)).Exec(ctx)
	return mapError(err, "operation")
}

func (r *OperationRepository) Get(ctx context.Context, id uuid.UUID) (model.Operation, error) {
	if r.prefetch != nil {
		if op, ok := r.prefetch.operation.take(id); ok {
			return op, nil
		}
	}
	return getRow[model.Operation, operationRow](ctx, r.db, r.workspace, id, "operation")
}

// updateOperation writes an operation's progress unless it ended: a
// finished operation keeps its outcome, but for a reopen (failed back to
// pending). A cancel is written over a pending operation, or a running one
// whose cancel was requested. The conditions are part of the UPDATE, so
// they are decided on the row being written, never on what the caller
// read: a transaction that ends the same operation (or starts its job) at
// the same moment holds the row's lock, this one waits for it and then,
// in READ COMMITTED, checks the conditions against the row that
// transaction committed. Of two deliveries of one job, only the first
// records its outcome; of a cancel and a job's start, the second sees the
// first.
const updateOperationIfAllowed = `
UPDATE operations
   SET status = ?0, error = ?1, updated_at = coalesce(?2, now())
 WHERE workspace_id = ?3 AND id = ?4
   AND (status NOT IN ('succeeded', 'failed', 'cancelled') OR (status = 'failed' AND ?0::text = 'pending'))
   AND (?0::text <> 'cancelled' OR status = 'pending' OR cancel_requested_at IS NOT NULL)`

// updateOperation is updateOperationIfAllowed returning whether the
// workspace has an enabled webhook endpoint (webhook_presence.go): the
// end of an operation looks its subscribers up next, and most workspaces
// have none.
const updateOperation = updateOperationIfAllowed + `
RETURNING EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.workspace_id = ?3 AND w.enabled) AS endpoints`

// selectOperationStatus tells why updateOperation changed nothing.
const selectOperationStatus = `SELECT status FROM operations WHERE workspace_id = ? AND id = ?`

// updateOperationRefusing is updateOperationIfAllowed raising its refusal
// itself (once_operation_refused, sql/035), for a job's steps, which send
// it with their COMMIT (ports.WithRefusalsAtCommit). It returns no row: a
// job's end read the endpoints' presence with its store
// (Tx.PrefetchJobEnd), and a start announces nothing. An end that found
// none and so announced nothing (?5) raises once_endpoint_appeared if the
// workspace has an enabled endpoint as it ends the operation: announced
// or not is decided as of this statement, as when updateOperation
// returned the presence, and the end runs again (serialization_failure is
// CodeUnavailable).
const updateOperationRefusing = `
WITH u AS (` + updateOperationIfAllowed + `
RETURNING 1)
SELECT once_operation_refused(?3, ?4) WHERE NOT EXISTS (SELECT FROM u)
UNION ALL
SELECT once_endpoint_appeared()
 WHERE ?5::boolean AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.workspace_id = ?3 AND w.enabled)`

// updateOperation and selectOperationStatus with numbered parameters: a
// job's start and end send them with their arguments apart (params.go).
var (
	updateOperationNumbered         = pgxPlaceholders(updateOperation)
	updateOperationRefusingNumbered = pgxPlaceholders(updateOperationRefusing)
	selectOperationStatusNumbered   = numberedPlaceholders(selectOperationStatus)
)

// Update implements ports.OperationRepository. On a connection of ours a
// store's UPDATE held before it (StoreRepository.Update) goes in its round
// trip, first, and is checked before it returns. In a job's steps
// (ports.RefusalsAtCommit) it is held itself, for the COMMIT, and its
// refusal is the commit's.
func (r *OperationRepository) Update(ctx context.Context, op model.Operation) error {
	ws, id := pgxUUID(r.workspace), pgxUUID(op.ID)
	args := []any{string(op.Status), strPtr(op.Error), timePtr(op.UpdatedAt), ws, id}
	if r.params.conn != nil && ports.RefusalsAtCommit(ctx) {
		announcedNone := op.Finished() && r.endpoints.none()
		return r.params.execOneAhead(ctx, "operation", updateOperationRefusingNumbered, nil, append(args, announcedNone)...)
	}
	var endpoints []bool
	err := r.params.query(ctx, updateOperationNumbered, args,
		func(scan func(dest ...any) error) error {
			var e bool
			err := scan(&e)
			endpoints = append(endpoints, e)
			return err
		})
	if err != nil {
		return mapError(err, "operation")
	}
	if len(endpoints) == 1 {
		r.endpoints.saw(endpoints[0])
		return nil
	}
	var status string
	if err := r.params.queryRow(ctx, selectOperationStatusNumbered, []any{ws, id}, &status); err != nil {
		return mapError(err, "operation")
	}
	return refusedUpdate(op.ID, model.Operation{Status: model.OperationStatus(status)})
}

// requestCancel is OperationRepository.RequestCancel in one statement, on
// the row as it is locked and written, as for updateOperation.
const requestCancel = `
UPDATE operations
   SET cancel_requested_at = ?0, updated_at = ?0
 WHERE workspace_id = ?1 AND id = ?2 AND status = 'running' AND cancel_requested_at IS NULL
RETURNING ` + operationColumns

// operationColumns are the columns an operationRow reads (not finished_at,
// which the database derives for the retention's index: sql/034).
const operationColumns = `id, workspace_id, kind, status, resource_type, resource_id, error,
       created_by, cancel_requested_at, created_at, updated_at`

// RequestCancel implements ports.OperationRepository.
func (r *OperationRepository) RequestCancel(ctx context.Context, id uuid.UUID, now time.Time) (model.Operation, error) {
	var rows []operationRow
	if err := r.db.NewRaw(requestCancel, now, r.workspace, id).Scan(ctx, &rows); err != nil {
		return model.Operation{}, mapError(err, "operation")
	}
	if len(rows) == 1 {
		return rows[0].domain(), nil
	}
	return r.Get(ctx, id)
}

// refusedUpdate is Update's refusal of a change to the operation id, which
// is stored as cur: it ended (ErrOperationFinished), or its job started
// before a cancel (ErrOperationStarted).
func refusedUpdate(id uuid.UUID, cur model.Operation) error {
	return refusedUpdateSaying(fmt.Sprintf("operation %s already %s", id, cur.Status), cur.Status)
}

// refusedUpdateSaying is refusedUpdate with its message written already
// (by once_operation_refused, sql/035).
func refusedUpdateSaying(message string, status model.OperationStatus) error {
	if cur := (model.Operation{Status: status}); cur.Finished() {
		return domain.Wrap(domain.CodeInvalidState, ports.ErrOperationFinished, message)
	}
	return domain.Wrap(domain.CodeInvalidState, ports.ErrOperationStarted, message)
}

// selectStoreByShop finds the store that holds a (platform, shop) pair, so
// STORE_ALREADY_EXISTS can name it.
const selectStoreByShop = `
SELECT id FROM stores
 WHERE workspace_id = ? AND platform = ? AND external_shop_id = ?`

// Create inserts the store; a shop the workspace already connected is not
// an error that aborts the transaction (ON CONFLICT DO NOTHING) so that the
// holder can be read and named in CodeStoreExists (insertUnlessLive: the
// holder may roll back before it is read).
func (r *StoreRepository) Create(ctx context.Context, s model.Store) error {
	insert := func() (sql.Result, error) {
		return r.db.NewInsert().Model(toStoreRow(s)).
			On("CONFLICT ON CONSTRAINT " + storeUniqueConstraint + " DO NOTHING").Exec(ctx)
	}
	return insertUnlessLive(ctx, r.db, r.noun, insert,
		r.db.NewRaw(selectStoreByShop, r.workspace, s.Platform, s.ExternalShopID),
		func(uuid.UUID) *domain.Error {
			return domain.Errorf(domain.CodeStoreExists, "this workspace already connected this %s shop; resource_id names its store", s.Platform)
		})
}

// updateStore raises no_data_found when the store is gone (sql/035): it
// may be sent with the COMMIT, which must not run then. The function runs
// only then: a call of PL/pgSQL per row written cost more than the UPDATE.
const updateStore = `
WITH u AS (
UPDATE stores
   SET name = ?, status = ?, credential_version = ?, sealed_credentials = ?,
       updated_at = coalesce(?::timestamptz, now())
 WHERE workspace_id = ? AND id = ?
RETURNING 1)
SELECT once_expect_row(0, 'store') WHERE NOT EXISTS (SELECT FROM u)`

// selectStore is a store of the workspace, by id.
const selectStore = `SELECT ` + storeColumns + ` FROM stores WHERE workspace_id = ? AND id = ?`

// storeColumns are a store's columns, in storeRow.dest's order.
const storeColumns = `id, workspace_id, platform, name, external_shop_id, status,
       credential_version, sealed_credentials, created_at, updated_at`

// The store's statements with numbered parameters (params.go): a
// verification's job reads and writes its store in each of its ends.
var (
	updateStoreNumbered = numberedPlaceholders(updateStore)
	selectStoreNumbered = numberedPlaceholders(selectStore)
)

// Update implements ports.StoreRepository. On a connection of ours the
// UPDATE is held for the transaction's next statement or its COMMIT (at
// a job's end, with the operation's UPDATE and the COMMIT): the
// transaction does not commit without it, nor without its one row.
func (r *StoreRepository) Update(ctx context.Context, s model.Store) error {
	row := toStoreRow(s)
	return r.params.execOneAhead(ctx, r.noun, updateStoreNumbered, nil,
		row.Name, row.Status, row.CredentialVersion, row.SealedCredentials, row.UpdatedAt, pgxUUID(r.workspace), pgxUUID(s.ID))
}

// List implements ports.OperationRepository: newest first by id (UUIDv7,
// time-ordered), through operations_workspace_id_idx.
func (r *OperationRepository) List(ctx context.Context, q ports.ListQuery) ([]model.Operation, error) {
	return listNewest(ctx, r.db, r.workspace, q, "operation", plain((*operationRow).domain),
		eq("status", q.Status), eq("kind", q.Kind))
}
