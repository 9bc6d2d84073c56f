package memory

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// tx is one open transaction: the writes it staged, the unique keys and
// idempotency scopes it reserved. Its fields are guarded by db.mu, which
// every repository method takes, so a tx is safe even if a caller shares it
// between goroutines.
type tx struct {
	db        *DB
	workspace uuid.UUID
	done      bool

	taskRows // written by t, not yet committed

	reserved []uniqueKey
	// released are committed unique keys t gave up (releaseLocked), freed
	// for everybody at commit.
	released map[uniqueKey]bool

	members map[memberKey]model.Member
	// memberDeletes are committed memberships this tx removed.
	memberDeletes map[memberKey]bool
	events        map[uuid.UUID]eventRow
	// eventDeletes are committed events this tx deleted; lockedEvents the
	// events it holds in db.eventLocks.
	eventDeletes map[uuid.UUID]bool
	lockedEvents []uuid.UUID
	// keyed are the events with an ordering key t appended, in the order
	// appended: commit numbers them (keySeq) under the database mutex, so
	// that within a key their order is the commit order, as PostgreSQL's
	// advisory lock makes it (adapters/postgres/outbox_sql.go).
	keyed []uuid.UUID
	// rowLocks are the row locks t holds in db.rowLocks; ended is closed
	// when t ends, waking the transactions that wait for them
	// (waitRowLock); waitingFor is the one t waits for, if any.
	rowLocks   []uniqueKey
	ended      chan struct{}
	waitingFor *tx
	// claims are the idempotency records this tx claimed (and maybe
	// completed); deletes the committed records DeleteExpired removed, by
	// the version it saw.
	claims  map[model.IdempotencyScope]model.IdempotencyRecord
	deletes map[model.IdempotencyScope]int64
}

var _ ports.Tx = (*tx)(nil)

func newTx(db *DB, workspace uuid.UUID) *tx {
	return &tx{
		taskRows:      newTaskRows(),
		db:            db,
		workspace:     workspace,
		members:       map[memberKey]model.Member{},
		memberDeletes: map[memberKey]bool{},
		events:        map[uuid.UUID]eventRow{},
		eventDeletes:  map[uuid.UUID]bool{},
		claims:        map[model.IdempotencyScope]model.IdempotencyRecord{},
		deletes:       map[model.IdempotencyScope]int64{},
		released:      map[uniqueKey]bool{},
		ended:         make(chan struct{}),
	}
}

func (t *tx) Members() ports.MemberRepository      { return memberRepo{t} }
func (t *tx) Outbox() ports.Outbox                 { return outboxRepo{t} }
func (t *tx) OutboxDispatch() ports.OutboxDispatch { return dispatchRepo{t} }
func (t *tx) Idempotency() ports.IdempotencyStore  { return idempotencyRepo{t} }

// lock takes the database mutex for one repository call and refuses a
// transaction that has already ended. Calls go through inLock (or
// lockOwn), which release it again.
func (t *tx) lock() error {
	t.db.mu.Lock()
	if t.done {
		t.db.mu.Unlock()
		return domain.Errorf(domain.CodeInternal, "transaction already ended: repositories must not be used after fn returns")
	}
	return nil
}

// inLock runs one repository call of t, fn, holding the database mutex.
func inLock[R any](t *tx, fn func() (R, error)) (R, error) {
	if err := t.lock(); err != nil {
		var none R
		return none, err
	}
	defer t.db.mu.Unlock()
	return fn()
}

// inLock is inLock for a call that returns only an error.
func (t *tx) inLock(fn func() error) error {
	_, err := inLock(t, func() (struct{}, error) { return struct{}{}, fn() })
	return err
}

// orNow is now, or the time of the call if now is zero, as in the
// PostgreSQL adapter.
func orNow(now time.Time) time.Time {
	if now.IsZero() {
		return time.Now()
	}
	return now
}

// lockOwn locks the database for a write of a row of workspace (what
// names it in errors), as lock does, and refuses a row of another
// workspace (ownWorkspace) with the lock released again.
func (t *tx) lockOwn(what string, workspace uuid.UUID) error {
	if err := t.lock(); err != nil {
		return err
	}
	if err := t.ownWorkspace(what, workspace); err != nil {
		t.db.mu.Unlock()
		return err
	}
	return nil
}

// ownWorkspace refuses a row of another workspace, as the WITH CHECK of a
// row-level security policy would.
func (t *tx) ownWorkspace(what string, workspace uuid.UUID) error {
	if workspace != t.workspace {
		return domain.Errorf(domain.CodeForbidden, "%s belongs to another workspace than the transaction's", what)
	}
	return nil
}

// commit publishes every staged write at once and releases what t held.
func (t *tx) commit() {
	db := t.db
	db.mu.Lock()
	defer db.mu.Unlock()

	// Deletes first, so a record this tx deleted and then claimed again is
	// replaced, not lost. A record is deleted only if it is still the version
	// DeleteExpired saw (another tx may have replaced it since).
	for scope, version := range t.deletes {
		if row, ok := db.idem[scope]; ok && row.version == version {
			delete(db.idem, scope)
		}
	}
	for scope, rec := range t.claims {
		db.idem[scope] = idemRow{record: rec, version: db.nextSeqLocked()}
		delete(db.claims, scope)
	}
	for k := range t.memberDeletes {
		delete(db.members, k)
	}
	for k, m := range t.members {
		db.members[k] = m
	}
	for id, e := range t.events {
		db.events[id] = e
	}
	for _, id := range t.keyed {
		if row, ok := db.events[id]; ok && row.keySeq == 0 {
			row.keySeq = db.nextSeqLocked()
			db.events[id] = row
		}
	}
	for id := range t.eventDeletes {
		delete(db.events, id)
		// The id is free again, as after a DELETE in PostgreSQL.
		delete(db.taken, eventKey(id))
	}
	t.taskRows.commitTo(db.taskRows)
	t.releaseEventLocksLocked()
	t.releaseRowLocksLocked()
	for _, k := range t.reserved {
		delete(db.reserved, k)
		db.taken[k] = true
	}
	// After the reservations: a key t released is free now, unless t took
	// it again (then reserveLocked removed it from released).
	for k := range t.released {
		delete(db.taken, k)
	}
	t.end()
}

// rollback discards the staged writes and releases what t held.
func (t *tx) rollback() {
	db := t.db
	db.mu.Lock()
	defer db.mu.Unlock()
	for scope := range t.claims {
		if db.claims[scope] == t {
			delete(db.claims, scope)
		}
	}
	for _, k := range t.reserved {
		if db.reserved[k] == t {
			delete(db.reserved, k)
		}
	}
	t.releaseEventLocksLocked()
	t.releaseRowLocksLocked()
	t.end()
}

// end marks t ended and wakes the transactions waiting for its row
// locks. Call with mu held.
func (t *tx) end() {
	t.done = true
	close(t.ended)
}

// releaseEventLocksLocked frees the outbox events t locked. Call with mu
// held.
func (t *tx) releaseEventLocksLocked() {
	for _, id := range t.lockedEvents {
		if t.db.eventLocks[id] == t {
			delete(t.db.eventLocks, id)
		}
	}
	t.lockedEvents = nil
}

// releaseRowLocksLocked frees the row locks t took (lockRowLocked). Call
// with mu held.
func (t *tx) releaseRowLocksLocked() {
	for _, k := range t.rowLocks {
		if t.db.rowLocks[k] == t {
			delete(t.db.rowLocks, k)
		}
	}
	t.rowLocks = nil
}

// PrefetchJob implements ports.Tx: in memory a Get costs no round trip,
// so there is nothing to read ahead.
func (t *tx) PrefetchJob(context.Context, uuid.UUID, uuid.UUID) error { return nil }

// PrefetchJobEnd implements ports.Tx, as PrefetchJob does.
func (t *tx) PrefetchJobEnd(context.Context, uuid.UUID) error { return nil }
