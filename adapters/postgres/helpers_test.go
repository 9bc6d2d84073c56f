package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// tenantTablesQuery finds the tables that must have row-level security:
// every table of the schema with a workspace_id (partitions aside: they
// are reached through their root), and workspaces. With each, whether RLS
// is enabled and forced, and how many policies it has.
const tenantTablesQuery = `
SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
       (SELECT count(*) FROM pg_catalog.pg_policy p WHERE p.polrelid = c.oid) AS policies
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'public'
   AND c.relkind IN ('r', 'p')
   AND NOT c.relispartition
   AND (c.relname = 'workspaces'
        OR EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                    WHERE a.attrelid = c.oid AND a.attname = 'workspace_id'
                      AND a.attnum > 0 AND NOT a.attisdropped))
 ORDER BY c.relname`

// tenantTables are the tables of tenantTablesQuery in db: found, not
// listed, so a new table is tested as soon as it exists.
func tenantTables(t *testing.T, db *pgtest.DB) []string {
	t.Helper()
	var tables []string
	if err := db.Owner.NewRaw(`SELECT relname FROM (`+tenantTablesQuery+`) t`).Scan(context.Background(), &tables); err != nil {
		t.Fatal(err)
	}
	return tables
}

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func newID(t testing.TB) uuid.UUID {
	t.Helper()
	id, err := uuid.NewV7()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func transact(t testing.TB, uow ports.UnitOfWork, ws uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) {
	t.Helper()
	if err := uow.Transact(context.Background(), ws, fn); err != nil {
		t.Fatalf("transact: %v", err)
	}
}

func scopeFor(ws uuid.UUID) model.IdempotencyScope {
	return model.IdempotencyScope{
		WorkspaceID: ws, UserID: uuid.New(), Method: "POST", Path: "/v1/stores", Key: uuid.New(),
	}
}

// seedWorkspace writes one row into every tenant table for a new workspace
// and returns its id. The idempotency record expires at expires.
func seedWorkspace(t testing.TB, uow ports.UnitOfWork, expires time.Time) uuid.UUID {
	t.Helper()
	ws := newID(t)
	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Workspaces().Create(ctx, model.Workspace{ID: ws, Name: "ws", CreatedAt: t0}); err != nil {
			return err
		}
		user := newID(t)
		if err := tx.Members().Add(ctx, model.Member{WorkspaceID: ws, UserID: user, Role: model.RoleAdmin, CreatedAt: t0}); err != nil {
			return err
		}
		store := model.Store{
			ID: newID(t), WorkspaceID: ws, Platform: "shopify", Name: "s", ExternalShopID: "shop-1",
			Status: model.StorePendingVerification, CredentialVersion: 1, SealedCredentials: []byte("sealed"),
			CreatedAt: t0, UpdatedAt: t0,
		}
		if err := tx.Stores().Create(ctx, store); err != nil {
			return err
		}
		op := model.Operation{
			ID: newID(t), WorkspaceID: ws, Kind: model.OperationStoreVerify, Status: model.OperationPending,
			ResourceType: "store", ResourceID: store.ID, CreatedBy: user, CreatedAt: t0, UpdatedAt: t0,
		}
		if err := tx.Operations().Create(ctx, op); err != nil {
			return err
		}
		ev, err := model.NewOutboxEvent(newID(t), ws, model.EventStoreCredentialsVerify, "store", store.ID,
			model.StoreCredentialsVerify{StoreID: store.ID, CredentialVersion: 1, JobOperation: model.JobOperation{OperationID: op.ID}}, t0)
		if err != nil {
			return err
		}
		if err := tx.Outbox().Append(ctx, ev); err != nil {
			return err
		}
		if err := seedTaskTables(ctx, tx, ws, store.ID, op.ID); err != nil {
			return err
		}
		endpoint := model.WebhookEndpoint{
			ID: newID(t), WorkspaceID: ws, URL: "https://hooks.example.com/once", Enabled: true,
			SecretVersion: 1, SealedSecret: []byte("sealed"), CreatedAt: t0, UpdatedAt: t0,
		}
		if err := ports.Repository[ports.WebhookEndpointRepository](tx).Create(ctx, endpoint); err != nil {
			return err
		}
		key := model.APIKey{
			ID: newID(t), WorkspaceID: ws, LookupID: strings.ReplaceAll(uuid.NewString(), "-", "")[:12], Name: "k", Scopes: []model.Scope{model.ScopeMediaRead},
			CreatedBy: user, Role: model.RoleAdmin, HashKeyID: "k1", Hash: []byte{1}, CreatedAt: t0,
		}
		if err := ports.Repository[ports.APIKeyRepository](tx).Create(ctx, key); err != nil {
			return err
		}
		sc := scopeFor(ws)
		sc.UserID = user
		rec := model.IdempotencyRecord{Scope: sc, FingerprintKeyID: "k1", Fingerprint: []byte{1, 2, 3}, CreatedAt: t0, ExpiresAt: expires}
		if existing, err := tx.Idempotency().Claim(ctx, rec); err != nil || existing != nil {
			t.Fatalf("claim: %v %v", existing, err)
		}
		return tx.Idempotency().Complete(ctx, sc, model.SavedResponse{Status: 202, Body: []byte(`{}`)}, t0)
	})
	return ws
}

func newUoW(db *pgtest.DB) *postgres.UnitOfWork { return postgres.NewUnitOfWork(db.App) }

// seedTaskTables writes, for every kind of kinds.All, one row of its
// table and of each table it fills (its kindRow's seed), with a product
// they may reference.
func seedTaskTables(ctx context.Context, tx ports.Tx, ws, store, op uuid.UUID) error {
	product := model.Product{
		ID: uuid.New(), WorkspaceID: ws, Title: "p", Currency: "EUR", Revision: 1, CreatedAt: t0, UpdatedAt: t0,
	}
	if err := tx.Products().Create(ctx, product); err != nil {
		return err
	}
	refs := seedRefs{ws: ws, store: store, product: product.ID, task: func() model.TaskState {
		s := model.NewTaskState(uuid.New(), ws, t0)
		s.OperationID = op
		return s
	}}
	for _, k := range kinds.All {
		row, err := kindRowOf(k)
		if err != nil {
			return err
		}
		if row.seed == nil {
			continue
		}
		if err := row.seed(ctx, tx, refs); err != nil {
			return fmt.Errorf("seeding %s: %w", k.Table, err)
		}
	}
	return nil
}

// openPool opens a pool of OpenPool (the pipelined connections) on dsn
// with at most conns connections, closed when t ends; with one, whatever a
// call leaves on the connection, the next one sees.
func openPool(t *testing.T, dsn string, conns int) *bun.DB {
	t.Helper()
	pool, err := postgres.OpenPool(context.Background(), dsn, postgres.Pool{MaxConns: conns, MaxIdle: conns, AcquireTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pool.Close() })
	return pool
}

// freshRecord is a new idempotency record of workspace ws, expiring in 48 h.
func freshRecord(ws uuid.UUID) model.IdempotencyRecord {
	return model.IdempotencyRecord{
		Scope: scopeFor(ws), FingerprintKeyID: "k1", Fingerprint: []byte("fp"),
		CreatedAt: time.Now(), ExpiresAt: time.Now().Add(48 * time.Hour),
	}
}

// endSessions has the server end every session of role, as an
// administrator would, and waits until they are gone.
func endSessions(t *testing.T, role string) {
	t.Helper()
	super, err := sql.Open("pgx", pgtest.SuperuserDSN())
	require.NoError(t, err)
	defer func() { _ = super.Close() }()
	_, err = super.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, role)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, super.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE usename = $1`, role).Scan(&n))
		return n == 0
	}, 30*time.Second, 20*time.Millisecond, "the terminated sessions did not end")
}
