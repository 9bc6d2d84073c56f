package ports

import "github.com/google/uuid"

// OperationEnds carries the news that operations ended from the process
// that committed their end to the waiters of every process
// (GET /v1/operations/{id}?wait=). It carries ids only: a waiter that hears
// one re-reads the operation, so the news can be late, repeated or
// spurious, but never wrong.
type OperationEnds interface {
	// Ended is called after the transaction that ended ids committed, never
	// inside it (a NOTIFY in the business transaction would serialize
	// every producer's commit, see DispatchSignal.Committed). It never
	// blocks; calls may coalesce. News lost on the way (a crash between
	// the commit and the send) is allowed: a waiter that hears nothing
	// re-reads when its wait ends.
	Ended(ids ...uuid.UUID)
	// Listen hands l, from now on, the ends of this process and, where the
	// adapter spans processes, of every process sharing its store. It is
	// called at most once per OperationEnds and returns at once; the
	// adapter calls l.Missed whenever news may have been lost (its
	// connection to the others was (re)established), including once when
	// it starts hearing.
	Listen(l OperationEndListener)
}

// OperationEndListener is what an OperationEnds tells. Its methods are
// called from the adapter's own goroutine and must not block.
type OperationEndListener interface {
	// Heard says that ids may have ended.
	Heard(ids []uuid.UUID)
	// Missed says that any operation may have ended unheard: every waiter
	// re-reads.
	Missed()
}
