package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
)

// Failures that say "the database cannot do it now" (out of connection
// slots, shutting down or restarting, refusing connections) are 503
// UNAVAILABLE with a Retry-After: the client retries with the same key.
func TestDatabaseOutagesAreUnavailableWithRetryAfter(t *testing.T) {
	t.Parallel()
	for name, err := range map[string]error{
		"too many connections (53300)": &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"},
		"admin shutdown (57P01)":       &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"},
		"cannot connect now (57P03)":   &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"},
		// A way in (HAProxy) still leading to a leader Patroni just
		// demoted to a standby.
		"read-only transaction (25006)": &pgconn.PgError{Code: "25006", Message: "cannot execute INSERT in a read-only transaction"},
		"connection refused": &net.OpError{Op: "dial", Net: "tcp",
			Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}},
		"connection cut": &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET},
		// A statement after another broke the connection (seen in a
		// failover): pgx closed it.
		"connection closed by pgx": fmt.Errorf("query: %w", pgconn.ErrConnClosed),
	} {
		mapped := postgres.MapError(err, "store")
		var de *domain.Error
		if !errors.As(mapped, &de) || de.Code != domain.CodeUnavailable {
			t.Errorf("%s: want UNAVAILABLE, got %v", name, mapped)
			continue
		}
		if de.RetryAfter != time.Second {
			t.Errorf("%s: want Retry-After 1s, got %s", name, de.RetryAfter)
		}
		if !de.Code.RetrySameKey() {
			t.Errorf("%s: the same key must be retryable", name)
		}
	}
}

// A database that cannot be reached at start-up is one line naming its
// address, never the password.
func TestOpenNamesTheUnreachableAddressWithoutThePassword(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now: connections are refused

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = postgres.Open(ctx, "postgres://once_service:hunter2-secret@"+addr+"/once?sslmode=disable")
	var ce *postgres.ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("want a *postgres.ConnectError, got %T %v", err, err)
	}
	msg := err.Error()
	for _, want := range []string{addr, "once_service", "connection refused"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not name %q", msg, want)
		}
	}
	if strings.Contains(msg, "hunter2") {
		t.Errorf("message leaks the password: %q", msg)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("message is more than one line: %q", msg)
	}
}

// A panic inside a transaction rolls it back and gives its connection back
// to the pool: with a pool of one, the next transaction gets it.
func TestTransactGivesTheConnectionBackAfterAPanic(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	one, err := postgres.OpenPool(ctx, db.AppDSN, postgres.Pool{MaxConns: 1, MaxIdle: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	// A leaked connection would make the second transaction wait; the
	// acquire timeout turns that into UNAVAILABLE instead of a hang.
	uow := postgres.NewUnitOfWork(one, postgres.WithAcquireTimeout(10*time.Second))
	ws := newID(t)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic did not propagate")
			}
		}()
		_ = uow.Transact(ctx, ws, func(context.Context, ports.Tx) error { panic("in the use case") })
	}()
	if err := uow.Transact(ctx, ws, func(context.Context, ports.Tx) error { return nil }); err != nil {
		t.Fatalf("the next transaction: %v", err)
	}
}
