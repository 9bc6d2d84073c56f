package postgres_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// commitCutter forwards connections to PostgreSQL and, once armed, cuts
// the connection whose server answers a COMMIT (its CommandComplete tag)
// before the client hears it: the transaction committed, the client lost
// its connection in the COMMIT's round trip. Pass is how many COMMITs an
// armed cutter lets through first.
type commitCutter struct {
	addr  string
	armed atomic.Bool
	pass  atomic.Int32
	cut   chan struct{}
}

func startCommitCutter(t *testing.T, target string) *commitCutter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	c := &commitCutter{addr: ln.Addr().String(), cut: make(chan struct{}, 1)}
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				_ = client.Close()
				continue
			}
			go func() {
				_, _ = io.Copy(server, client)
				_ = server.Close()
			}()
			go c.answer(client, server)
		}
	}()
	return c
}

// answer forwards the server's messages to the client until an armed
// cutter sees a COMMIT's completion, which it drops with the connection.
func (c *commitCutter) answer(client, server net.Conn) {
	defer func() { _ = client.Close(); _ = server.Close() }()
	buf := make([]byte, 64<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			if bytes.Contains(buf[:n], []byte("COMMIT\x00")) && c.armed.Load() && c.pass.Add(-1) < 0 &&
				c.armed.CompareAndSwap(true, false) {
				c.cut <- struct{}{}
				return
			}
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// A connection lost in the COMMIT's round trip leaves the outcome unknown
// (here the server committed): Transact must say CodeUnavailable, so the
// job (or the client, with its key) tries again, whatever the COMMIT was
// sent with: alone after the statements held as a simple query, or with
// the statements held ahead (a job's end: its store's and its operation's
// UPDATEs).
func TestACommitWhoseConnectionIsLostIsUnavailable(t *testing.T) {
	db := pgtest.New(t)
	dsn, err := url.Parse(db.AppDSN)
	require.NoError(t, err)
	cutter := startCommitCutter(t, dsn.Host)
	dsn.Host = cutter.addr
	pool, err := postgres.OpenPool(context.Background(), dsn.String(),
		postgres.Pool{MaxConns: 1, MaxIdle: 1, AcquireTimeout: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pool.Close() })
	uow := postgres.NewUnitOfWork(pool)
	check := postgres.NewUnitOfWork(db.App)
	ctx := context.Background()

	t.Run("held as a simple query", func(t *testing.T) {
		_, op := verification(t, uow)
		product := model.Product{ID: newID(t), WorkspaceID: op.WorkspaceID, Title: "Mug", PriceMinor: 100, Currency: "EUR",
			MediaIDs: []uuid.UUID{}, Revision: 1, CreatedAt: t0, UpdatedAt: t0}
		cutter.armed.Store(true)
		err := uow.Transact(ctx, op.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
			return tx.Products().Create(ctx, product)
		})
		<-cutter.cut
		require.True(t, domain.IsCode(err, domain.CodeUnavailable), "%v", err)
	})

	t.Run("held ahead, a job's end", func(t *testing.T) {
		_, op := verification(t, uow)
		require.NoError(t, startJob(ctx, uow, op))
		// The end's reads end their own transaction first (sendReads);
		// the COMMIT cut is its writes'.
		cutter.pass.Store(1)
		cutter.armed.Store(true)
		err := endJob(ctx, uow, op)
		<-cutter.cut
		transact(t, check, op.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
			got, err := tx.Operations().Get(ctx, op.ID)
			require.NoError(t, err)
			require.Equal(t, model.OperationSucceeded, got.Status, "the server committed the end")
			return nil
		})
		require.True(t, domain.IsCode(err, domain.CodeUnavailable), "a lost COMMIT round trip: %v", err)
	})
}

// A job's end commits in the round trip of its held UPDATEs
// (pgxTx.commitAhead): a commit whose wait for the synchronous standby
// was cancelled is no success there either.
func TestAJobsEndUnconfirmedByTheStandbyIsNoSuccess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	ws := uuid.New()
	store := model.Store{
		ID: uuid.New(), WorkspaceID: ws, Platform: "shopify", Name: "s", ExternalShopID: "shop-" + uuid.NewString(),
		Status: model.StorePendingVerification, CredentialVersion: 1, SealedCredentials: []byte("sealed"),
		CreatedAt: t0, UpdatedAt: t0,
	}
	op := model.Operation{ID: uuid.New(), WorkspaceID: ws, Kind: model.OperationStoreVerify, Status: model.OperationRunning,
		ResourceType: "store", ResourceID: store.ID, CreatedBy: uuid.New(), CreatedAt: t0, UpdatedAt: t0}
	w := newUnconfirmedWorld(t, ws, func(ctx context.Context, tx ports.Tx) error {
		if err := tx.Stores().Create(ctx, store); err != nil {
			return err
		}
		return tx.Operations().Create(ctx, op)
	})
	done := inBackground(func() error { return endJob(context.Background(), w.uow, op) })
	w.cancelWait(w.db.AppRole)
	err := <-done
	require.True(t, domain.IsCode(err, domain.CodeUnavailable), "%v", err)
	require.EqualValues(t, 1, w.count.n.Load())
}
