package contract

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Fixtures and helpers shared by the scenario repositories' tests.

// elsewhere is a zone that is not UTC: values are written in it to check
// that adapters read every time back in UTC.
var elsewhere = time.FixedZone("UTC+5:30", 5*3600+30*60)

// writeTime is a time as a caller might pass it: not UTC, with nanoseconds.
func writeTime() time.Time { return time.Now().In(elsewhere) }

// newTaskState is the state of a new pending task of ws written at at,
// tracked by an operation of its own.
func newTaskState(ws uuid.UUID, at time.Time) model.TaskState {
	s := model.NewTaskState(uuid.New(), ws, at)
	s.OperationID = uuid.New()
	return s
}

// inTx runs fn in a transaction of workspace that must commit.
func inTx(t *testing.T, h Harness, ws uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) {
	t.Helper()
	mustTransact(t, h, ws, fn)
}

// requireResource asserts err has code and names resource (ResourceID).
func requireResource(t *testing.T, err error, code domain.Code, resource uuid.UUID) {
	t.Helper()
	requireCode(t, err, code)
	var de *domain.Error
	require.ErrorAs(t, err, &de)
	require.Equal(t, resource.String(), de.ResourceID, "ResourceID of %v", err)
}

// newProductIn creates a product in ws and returns it as stored.
func newProductIn(t *testing.T, h Harness, ws uuid.UUID) model.Product {
	t.Helper()
	p := newProduct(ws)
	inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Products().Create(ctx, p) })
	return productTable.stored(p)
}

// newStoreIn creates a store in ws and returns its id.
func newStoreIn(t *testing.T, h Harness, ws uuid.UUID) uuid.UUID {
	t.Helper()
	s := newStore(ws)
	createStore(t, h, s)
	return s.ID
}

// raceTwo runs attempt(0) and attempt(1) in two transactions of ws that are
// open at the same time: both begin, then both attempt, and neither commits
// before both attempted or, where the database makes the second attempt
// wait for the first transaction (PostgreSQL on a unique key or a row lock),
// a short while has passed. Then both are let go to commit. It returns the
// Transact errors.
func raceTwo(t *testing.T, h Harness, ws uuid.UUID, attempt func(i int, ctx context.Context, tx ports.Tx) error) [2]error {
	t.Helper()
	var (
		errs      [2]error
		wg        sync.WaitGroup
		started   = make(chan struct{}, 2)
		attempted = make(chan int, 2)
		begin     = make(chan struct{})
		commit    = make(chan struct{})
		beginOnce sync.Once
		endOnce   sync.Once
	)
	openBegin := func() { beginOnce.Do(func() { close(begin) }) }
	openCommit := func() { endOnce.Do(func() { close(commit) }) }
	// On a failed assertion, let the transactions end before returning.
	defer func() { openBegin(); openCommit(); wg.Wait() }()
	for i := range 2 {
		wg.Go(func() {
			errs[i] = h.UoW.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
				started <- struct{}{}
				<-begin
				err := attempt(i, ctx, tx)
				attempted <- i
				<-commit
				return err
			})
		})
	}
	for range 2 {
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("transactions did not start")
		}
	}
	openBegin()
	select {
	case <-attempted:
	case <-time.After(10 * time.Second):
		t.Fatal("no attempt returned")
	}
	select {
	case <-attempted: // the other attempt did not wait (memory)
	case <-time.After(300 * time.Millisecond): // it waits for the first transaction
	}
	openCommit()
	wg.Wait()
	return errs
}

// holdOpen runs begin in a transaction of ws that then stays open until
// release is called, and ends with end's error (errRollback rolls it
// back). It returns once begin has returned; an error of begin, or a
// transaction that ends before, fails the test. release waits for the end
// and returns Transact's error; the test's cleanup releases a transaction
// the test did not.
func holdOpen(t *testing.T, h Harness, ws uuid.UUID, begin, end func(ctx context.Context, tx ports.Tx) error) (release func() error) {
	t.Helper()
	begun, done, releasec := make(chan error, 1), make(chan error, 1), make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(releasec) }) }
	t.Cleanup(open)
	go func() {
		done <- h.UoW.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
			err := begin(ctx, tx)
			begun <- err
			if err != nil {
				return err
			}
			<-releasec
			return end(ctx, tx)
		})
	}()
	select {
	case err := <-begun:
		require.NoError(t, err, "the first step of the transaction held open")
	case err := <-done:
		t.Fatalf("the transaction held open ended before its first step: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the transaction held open did not take its first step within 10s")
	}
	return func() error {
		open()
		return <-done
	}
}

// rollBack ends a transaction held open by rolling it back.
func rollBack(context.Context, ports.Tx) error { return errRollback }

// oneWins asserts exactly one of errs is nil and returns the index of the
// winner; the loser's error is returned for further checks.
func oneWins(t *testing.T, errs [2]error) (winner int, loserErr error) {
	t.Helper()
	switch {
	case errs[0] == nil && errs[1] != nil:
		return 0, errs[1]
	case errs[1] == nil && errs[0] != nil:
		return 1, errs[0]
	}
	t.Fatalf("want exactly one winner, got errors %v and %v", errs[0], errs[1])
	return -1, nil
}
