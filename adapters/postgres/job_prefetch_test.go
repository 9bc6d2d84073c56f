package postgres_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// statements counts the statements bun sends.
type statements struct{ n atomic.Int32 }

func (s *statements) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	s.n.Add(1)
	return ctx
}

func (s *statements) AfterQuery(context.Context, *bun.QueryEvent) {}

// A job's first transaction reads its event, its operation and the store
// the operation tracks with PrefetchJob (in BEGIN's round trip on a pool of
// OpenPool): the first Get of each is then answered without a statement of its own, with the row as
// PrefetchJob read it, and a second Get reads again. A forged message (no
// such event, or another workspace's) and a missing operation are still
// CodeNotFound, from their Gets. On a pool opened some other way,
// PrefetchJob reads nothing and the Gets read as before.
func TestAJobsEventAndOperationAreReadTogether(t *testing.T) {
	for name, db := range everyPool(t) {
		t.Run(name, func(t *testing.T) {
			uow := postgres.NewUnitOfWork(db)
			ws, other := newID(t), newID(t)
			op := model.Operation{ID: newID(t), WorkspaceID: ws, Kind: model.OperationStoreVerify, Status: model.OperationPending,
				ResourceType: "store", ResourceID: newID(t), CreatedBy: newID(t), CreatedAt: t0, UpdatedAt: t0}
			event := func(ws uuid.UUID) model.OutboxEvent {
				e, err := model.NewOutboxEvent(newID(t), ws, "store.credentials.verify", "store", op.ResourceID,
					map[string]string{"operation_id": op.ID.String()}, time.Now())
				require.NoError(t, err)
				return e
			}
			mine, theirs := event(ws), event(other)
			store := model.Store{
				ID: op.ResourceID, WorkspaceID: ws, Platform: "shopify", Name: "s", ExternalShopID: "shop-1",
				Status: model.StorePendingVerification, CredentialVersion: 1, SealedCredentials: []byte("sealed"),
				CreatedAt: t0, UpdatedAt: t0,
			}
			transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
				if err := tx.Stores().Create(ctx, store); err != nil {
					return err
				}
				if err := tx.Operations().Create(ctx, op); err != nil {
					return err
				}
				return tx.Outbox().Append(ctx, mine)
			})
			transact(t, uow, other, func(ctx context.Context, tx ports.Tx) error { return tx.Outbox().Append(ctx, theirs) })

			var seen statements
			db.AddQueryHook(&seen)
			prefetched := name == "OpenPool"
			transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
				require.NoError(t, tx.PrefetchJob(ctx, mine.ID, op.ID))
				// Changed meanwhile by another transaction: what the first
				// Get answers says where it came from.
				require.NoError(t, uow.Transact(context.Background(), ws, func(ctx context.Context, tx2 ports.Tx) error {
					started := op
					started.Start(t0.Add(time.Second))
					if err := tx2.Operations().Update(ctx, started); err != nil {
						return err
					}
					verified := store
					verified.Status = model.StoreVerified
					return tx2.Stores().Update(ctx, verified)
				}))
				before := seen.n.Load()
				gotEvent, err := tx.Outbox().Get(ctx, mine.ID)
				require.NoError(t, err)
				require.Equal(t, mine.ID, gotEvent.ID)
				require.JSONEq(t, string(mine.Payload), string(gotEvent.Payload))
				gotOp, err := tx.Operations().Get(ctx, op.ID)
				require.NoError(t, err)
				require.Equal(t, op.ID, gotOp.ID)
				gotStore, err := tx.Stores().Get(ctx, store.ID)
				require.NoError(t, err)
				require.Equal(t, store.SealedCredentials, gotStore.SealedCredentials)
				if prefetched {
					require.Equal(t, before, seen.n.Load(), "the prefetched Gets sent a statement")
					require.Equal(t, model.OperationPending, gotOp.Status, "the first Get answers what PrefetchJob read")
					require.Equal(t, model.StorePendingVerification, gotStore.Status, "the first Get answers what PrefetchJob read")
				} else {
					require.Equal(t, model.OperationRunning, gotOp.Status)
					require.Equal(t, model.StoreVerified, gotStore.Status)
				}
				again, err := tx.Operations().Get(ctx, op.ID)
				require.NoError(t, err)
				require.Equal(t, model.OperationRunning, again.Status, "a second Get reads again")
				storeAgain, err := tx.Stores().Get(ctx, store.ID)
				require.NoError(t, err)
				require.Equal(t, model.StoreVerified, storeAgain.Status, "a second Get reads again")
				return nil
			})

			for _, missing := range []struct {
				event, operation uuid.UUID
			}{{theirs.ID, op.ID}, {newID(t), newID(t)}} {
				transact(t, uow, ws, func(ctx context.Context, tx ports.Tx) error {
					require.NoError(t, tx.PrefetchJob(ctx, missing.event, missing.operation))
					_, err := tx.Outbox().Get(ctx, missing.event)
					require.True(t, domain.IsCode(err, domain.CodeNotFound), "event: %v", err)
					if missing.operation != op.ID {
						_, err = tx.Operations().Get(ctx, missing.operation)
						require.True(t, domain.IsCode(err, domain.CodeNotFound), "operation: %v", err)
					}
					return nil
				})
			}
		})
	}
}
