// Package memory implements the persistence ports in process memory, with the
// semantics of the PostgreSQL adapter: real transactions (writes are staged
// and become visible to others only on commit), workspace isolation as
// row-level security would enforce it, unique keys that hold under
// concurrency, and idempotency claims that never wait.
//
// It backs unit tests and the embedded default. Data lives as long as the DB
// value does.
package memory

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

// DB is the committed state shared by every transaction. One short mutex
// guards it: repositories take it for a single read or write, and commit
// takes it to publish a transaction's writes at once. No lock is held while
// a transaction's function runs, so transactions really run concurrently.
type DB struct {
	mu sync.Mutex

	taskRows // committed

	members map[memberKey]model.Member
	events  map[uuid.UUID]eventRow
	idem    map[model.IdempotencyScope]idemRow

	// taken holds the unique keys of committed rows; reserved the unique keys
	// that open transactions have written and not yet committed. A key in
	// either is a duplicate for everybody else.
	taken    map[uniqueKey]bool
	reserved map[uniqueKey]*tx
	// claims are the idempotency scopes open transactions hold.
	claims map[model.IdempotencyScope]*tx
	// eventLocks are the outbox events open transactions claimed, changed
	// or deleted: the row locks of PostgreSQL. Other transactions skip
	// them (FOR UPDATE SKIP LOCKED) until the holder ends.
	eventLocks map[uuid.UUID]*tx
	// rowLocks are the rows open transactions changed by a compare-and-set
	// (a media Transition): PostgreSQL's row lock, held until the holder
	// ends and not kept after commit as a unique key is.
	rowLocks map[uniqueKey]*tx

	// seq orders rows written at the same instant (outbox "oldest first")
	// and versions idempotency records.
	seq int64
}

// NewDB returns an empty database. Build the UnitOfWork and the Discovery
// from the same DB so they see the same rows.
func NewDB() *DB {
	return &DB{
		taskRows: newTaskRows(),
		members:  map[memberKey]model.Member{},
		events:   map[uuid.UUID]eventRow{},
		idem:     map[model.IdempotencyScope]idemRow{},

		taken:      map[uniqueKey]bool{},
		reserved:   map[uniqueKey]*tx{},
		claims:     map[model.IdempotencyScope]*tx{},
		eventLocks: map[uuid.UUID]*tx{},
		rowLocks:   map[uniqueKey]*tx{},
	}
}

type memberKey struct {
	workspace uuid.UUID
	user      uuid.UUID
}

// uniqueKey is one value of one unique constraint, for example
// {"stores_pkey", id} or {"stores_shop_key", workspace+platform+shop}.
type uniqueKey struct {
	constraint string
	value      string
}

// nextSeqLocked returns a new sequence number. Call with mu held.
func (db *DB) nextSeqLocked() int64 {
	db.seq++
	return db.seq
}

// reserveLocked takes keys for t, all or none. It reports false if any key
// is already committed or written by an open transaction (t included: a
// second insert of the same key in one transaction is a duplicate too). A
// committed key t released earlier (releaseLocked) is t's to take again.
// Call with mu held.
func (db *DB) reserveLocked(t *tx, keys ...uniqueKey) bool {
	for i, k := range keys {
		if (db.taken[k] && !t.released[k]) || db.reserved[k] != nil {
			return false
		}
		for _, earlier := range keys[:i] {
			if earlier == k {
				return false
			}
		}
	}
	for _, k := range keys {
		if t.released[k] {
			// Still taken in db: the new row of t holds it now.
			delete(t.released, k)
			continue
		}
		db.reserved[k] = t
		t.reserved = append(t.reserved, k)
	}
	return true
}

// releaseLocked gives up k for t: a row of t left a partial unique index
// (a publication failed, a sync finished). A key t reserved is free at once;
// a committed key is free for t at once and for everybody when t commits,
// as an UPDATE that moves a row out of a partial index is. Call with mu held.
func (db *DB) releaseLocked(t *tx, k uniqueKey) {
	if db.reserved[k] == t {
		delete(db.reserved, k)
		for i, r := range t.reserved {
			if r == k {
				t.reserved = append(t.reserved[:i], t.reserved[i+1:]...)
				break
			}
		}
		return
	}
	if db.taken[k] {
		t.released[k] = true
	}
}

// keyTakenLocked reports whether k is committed or reserved by anyone.
func (db *DB) keyTakenLocked(k uniqueKey) bool {
	return db.taken[k] || db.reserved[k] != nil
}

// keyHolderLocked returns the open transaction that reserved k, or nil.
func (db *DB) keyHolderLocked(k uniqueKey) *tx {
	return db.reserved[k]
}

// keyTakenForLocked reports whether k is a duplicate for t: committed and
// not released by t, or reserved by any open transaction (t included).
func (db *DB) keyTakenForLocked(t *tx, k uniqueKey) bool {
	return (db.taken[k] && !t.released[k]) || db.reserved[k] != nil
}

// lockRowLocked takes the row lock k for t until t ends. It reports false if
// another open transaction holds it: the caller either refuses at once or,
// as PostgreSQL makes t wait and then re-check its condition on the new row
// version, waits for that one to end (waitRowLock) and tries again. Taking a
// lock t holds already succeeds. Call with mu held.
func (db *DB) lockRowLocked(t *tx, k uniqueKey) bool {
	switch db.rowLocks[k] {
	case t:
		return true
	case nil:
		db.rowLocks[k] = t
		t.rowLocks = append(t.rowLocks, k)
		return true
	}
	return false
}

// waitRowLock waits until no other open transaction holds the row lock k
// (it does not take it: the caller does, with its check, under mu). A wait
// that would close a cycle (the holder waits, directly or not, for t) is
// refused with CodeUnavailable at once, as PostgreSQL's deadlock detector
// aborts one of the two; so is a wait that ctx ends.
func (db *DB) waitRowLock(ctx context.Context, t *tx, k uniqueKey) error {
	for {
		db.mu.Lock()
		holder := db.rowLocks[k]
		if holder == nil || holder == t {
			db.mu.Unlock()
			return nil
		}
		for h := holder; h != nil; h = h.waitingFor {
			if h == t {
				db.mu.Unlock()
				return domain.Errorf(domain.CodeUnavailable, "deadlock: two transactions wait for each other's rows")
			}
		}
		t.waitingFor = holder
		ended := holder.ended
		db.mu.Unlock()

		select {
		case <-ended:
		case <-ctx.Done():
		}
		db.mu.Lock()
		t.waitingFor = nil
		db.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return domain.Wrap(domain.CodeUnavailable, err, "waiting for a row lock")
		}
	}
}
