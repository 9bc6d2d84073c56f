package postgres_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/testsupport/contract"
	"github.com/oncehq/once/testsupport/pgtest"
)

func waitWake(t *testing.T, s *postgres.Signal, d time.Duration, what string) {
	t.Helper()
	select {
	case <-s.Wake():
	case <-time.After(d):
		t.Fatalf("%s: no wake-up within %s", what, d)
	}
}

// twoProcesses are two Signals on one database, each with its own pool
// and LISTEN connection, as two processes would have.
func twoProcesses(t *testing.T) (sender, receiver *postgres.Signal) {
	t.Helper()
	db := pgtest.New(t)
	ctx := context.Background()
	other, err := postgres.Open(ctx, db.AppDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	sender = postgres.NewSignal(ctx, db.App, db.AppDSN, nil)
	t.Cleanup(func() { _ = sender.Close() })
	receiver = postgres.NewSignal(ctx, other, db.AppDSN, nil)
	t.Cleanup(func() { _ = receiver.Close() })
	return sender, receiver
}

// Committed in one process wakes the Dispatchers of another.
func TestSignalWakesAcrossConnections(t *testing.T) {
	t.Parallel()
	sender, receiver := twoProcesses(t)

	// Each Signal wakes once when its LISTEN is in place (anything sent
	// before was unheard); after that, the receiver is listening.
	waitWake(t, receiver, 10*time.Second, "receiver listening")
	waitWake(t, sender, 10*time.Second, "sender listening")

	// Committed wakes the sender's own process at once, and the receiver
	// through NOTIFY.
	sender.Committed()
	waitWake(t, sender, 10*time.Second, "in-process wake")
	waitWake(t, receiver, 10*time.Second, "wake through NOTIFY")

	// A burst coalesces: it never blocks, and wakes the receiver again.
	for range 1000 {
		sender.Committed()
	}
	waitWake(t, receiver, 10*time.Second, "wake after a burst")

	// Close stops both loops and is idempotent.
	if err := receiver.Close(); err != nil {
		t.Fatal(err)
	}
	if err := receiver.Close(); err != nil {
		t.Fatal(err)
	}
}

// A process that only produces events (an API without a Dispatcher, a CLI
// command) holds no LISTEN connection; the first Wake opens one.
func TestSignalListensOnlyOnceSomeoneWaits(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	listeners := func() int {
		var n int
		// The app role sees its own sessions' last statements.
		err := db.App.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE usename = current_user AND query ILIKE 'listen%'`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	s := postgres.NewSignal(ctx, db.App, db.AppDSN, nil)
	t.Cleanup(func() { _ = s.Close() })
	s.Committed() // producing is fine without listening
	time.Sleep(300 * time.Millisecond)
	if n := listeners(); n != 0 {
		t.Fatalf("%d LISTEN sessions before anyone waited", n)
	}
	waitWake(t, s, 10*time.Second, "listening after the first Wake")
	deadline := time.Now().Add(10 * time.Second)
	for listeners() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("no LISTEN session after Wake")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The ends one process announces reach the listener of another.
func TestOperationEndsContract(t *testing.T) {
	t.Parallel()
	sender, receiver := twoProcesses(t)
	contract.OperationEnds(t, sender, receiver)
}

// missCounter counts Missed calls and ignores what is heard.
type missCounter struct{ missed chan struct{} }

func (m missCounter) Heard([]uuid.UUID) {}
func (m missCounter) Missed()           { m.missed <- struct{}{} }

// When the LISTEN connection is lost, ends sent meanwhile go unheard: on
// reconnecting, the Signal tells its listener so (Missed), and every
// waiter re-reads.
func TestOperationEndsMissedAfterConnectionLoss(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	s := postgres.NewSignal(ctx, db.App, db.AppDSN, nil)
	t.Cleanup(func() { _ = s.Close() })
	l := missCounter{missed: make(chan struct{}, 10)}
	s.Listen(l)
	awaitMissed := func(what string) {
		t.Helper()
		select {
		case <-l.missed:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no Missed within 10s", what)
		}
	}
	awaitMissed("listening")

	super, err := sql.Open("pgx", pgtest.SuperuserDSN())
	require.NoError(t, err)
	defer super.Close()
	_, err = super.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = $1 AND usename = $2 AND query ILIKE 'listen%'`, db.Name, db.AppRole)
	require.NoError(t, err)
	awaitMissed("listening again after the connection was ended")
}
