package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// verification is a store and the running operation of its verification,
// committed in workspace ws.
func verification(t *testing.T, uow ports.UnitOfWork) (model.Store, model.Operation) {
	t.Helper()
	ws := newID(t)
	store := model.Store{
		ID: newID(t), WorkspaceID: ws, Platform: "shopify", Name: "s", ExternalShopID: "shop-" + newID(t).String(),
		Status: model.StorePendingVerification, CredentialVersion: 1, SealedCredentials: []byte("sealed"),
		CreatedAt: t0, UpdatedAt: t0,
	}
	op := model.Operation{ID: newID(t), WorkspaceID: ws, Kind: model.OperationStoreVerify, Status: model.OperationRunning,
		ResourceType: "store", ResourceID: store.ID, CreatedBy: newID(t), CreatedAt: t0, UpdatedAt: t0}
	transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Stores().Create(ctx, store); err != nil {
			return err
		}
		return tx.Operations().Create(ctx, op)
	})
	return store, op
}

// verdict is a verification's end as its job writes it: the store read,
// its verdict written, the operation ended.
func verdict(ctx context.Context, tx ports.Tx, store model.Store, op model.Operation) error {
	s, err := tx.Stores().Get(ctx, store.ID)
	if err != nil {
		return err
	}
	s.Status, s.UpdatedAt = model.StoreVerified, t0.Add(time.Minute)
	if err := tx.Stores().Update(ctx, s); err != nil {
		return err
	}
	op.Succeed(t0.Add(time.Minute))
	return tx.Operations().Update(ctx, op)
}

// A store's UPDATE held for the next statement (on a pool of OpenPool)
// still decides the transaction as when it ran on its own: it commits
// with the operation's end; a store gone meanwhile fails the transaction
// with CodeNotFound and nothing of it commits, whether a statement followed
// it or only the COMMIT; an operation ended meanwhile refuses the end
// (ports.ErrOperationFinished) and the store's verdict rolls back with it.
func TestAStoresUpdateStillDecidesItsTransaction(t *testing.T) {
	t.Parallel()
	for name, pool := range everyPool(t) {
		t.Run(name, func(t *testing.T) {
			uow := postgres.NewUnitOfWork(pool)
			ctx := context.Background()
			read := func(store model.Store, op model.Operation) (model.Store, model.Operation) {
				var s model.Store
				var o model.Operation
				transact(t, uow, store.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
					var err error
					if s, err = tx.Stores().Get(ctx, store.ID); err != nil {
						return err
					}
					o, err = tx.Operations().Get(ctx, op.ID)
					return err
				})
				return s, o
			}

			store, op := verification(t, uow)
			if err := uow.Transact(ctx, store.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
				return verdict(ctx, tx, store, op)
			}); err != nil {
				t.Fatalf("the verdict: %v", err)
			}
			if s, o := read(store, op); s.Status != model.StoreVerified || o.Status != model.OperationSucceeded {
				t.Fatalf("after the verdict: store %s, operation %s; want verified, succeeded", s.Status, o.Status)
			}

			store, op = verification(t, uow)
			gone := store
			gone.ID = newID(t)
			err := uow.Transact(ctx, store.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
				if err := tx.Stores().Update(ctx, gone); err != nil {
					return err
				}
				op.Succeed(t0.Add(time.Minute))
				return tx.Operations().Update(ctx, op)
			})
			if !domain.IsCode(err, domain.CodeNotFound) {
				t.Fatalf("a missing store's update, then the operation's: %v; want %s", err, domain.CodeNotFound)
			}
			if _, o := read(store, op); o.Status != model.OperationRunning {
				t.Fatalf("the operation after a missing store's update: %s; want running (rolled back)", o.Status)
			}
			err = uow.Transact(ctx, store.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
				op.Succeed(t0.Add(time.Minute))
				if err := tx.Operations().Update(ctx, op); err != nil {
					return err
				}
				return tx.Stores().Update(ctx, gone) // then only the COMMIT
			})
			if !domain.IsCode(err, domain.CodeNotFound) {
				t.Fatalf("a missing store's update before the COMMIT: %v; want %s", err, domain.CodeNotFound)
			}
			if _, o := read(store, op); o.Status != model.OperationRunning {
				t.Fatalf("the operation after a missing store's update: %s; want running (rolled back)", o.Status)
			}

			failed := op
			failed.Fail("gone", t0.Add(time.Second))
			transact(t, uow, store.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
				return tx.Operations().Update(ctx, failed)
			})
			err = uow.Transact(ctx, store.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
				return verdict(ctx, tx, store, op)
			})
			if !errors.Is(err, ports.ErrOperationFinished) {
				t.Fatalf("the verdict on an ended operation: %v; want ErrOperationFinished", err)
			}
			if s, _ := read(store, op); s.Status != model.StorePendingVerification {
				t.Fatalf("the store after a refused verdict: %s; want pending_verification (rolled back)", s.Status)
			}
		})
	}
}

// A job's statements by primary key (the operation's UPDATE, the store's
// read and UPDATE), and the workspace's set_config sent with BEGIN, are prepared once per connection and planned once:
// the application role plans every other prepared statement for its
// arguments (force_custom_plan), and so did these, for about as long as
// they ran.
func TestAJobsStatementsArePlannedOnce(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	uow := postgres.NewUnitOfWork(openPool(t, db.AppDSN, 1))
	for range 3 {
		store, op := verification(t, uow)
		transact(t, uow, store.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
			return verdict(ctx, tx, store, op)
		})
	}
	transact(t, uow, newID(t), func(ctx context.Context, tx ports.Tx) error {
		for _, table := range []string{"UPDATE operations", "FROM stores", "UPDATE stores", "set_config('app.workspace_id'"} {
			var generic, custom int
			err := postgres.TxDB(tx.(*postgres.Tx)).QueryRowContext(ctx, `SELECT coalesce(sum(generic_plans), 0), coalesce(sum(custom_plans), 0)
				  FROM pg_prepared_statements WHERE statement LIKE '%' || ? || '%' AND statement NOT LIKE '%pg_prepared_statements%'`,
				table).Scan(&generic, &custom)
			if err != nil {
				return err
			}
			if generic < 3 || custom != 0 {
				t.Errorf("%s: %d generic and %d custom plans in 3 jobs' ends; want at least 3 generic, no custom", table, generic, custom)
			}
		}
		return nil
	})
}
