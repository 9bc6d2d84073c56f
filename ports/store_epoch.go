package ports

import "context"

// StoreEpoch says whether the store behind the ports may have been replaced
// under the process since a value was read from it: a failover to a standby
// that never received the last commits, a restore from a backup, a
// reconnect to another server. Whatever a process keeps in memory of what
// it read (the completed idempotent responses above all) is valid only
// while the epoch it was read in is current: a stored record the database
// no longer has must never be answered from memory.
//
// Epoch never goes back; it may move on without anything having been lost
// (a reconnect to the same data through another address), never the other
// way round. A store that cannot be replaced under the process (the memory
// store) has no StoreEpoch.
type StoreEpoch interface {
	// Epoch is the epoch as far as the process has seen, at no cost.
	Epoch() uint64
	// Confirm is the epoch as of now. A store that can be replaced
	// without the process seeing it by itself (behind a pooler in
	// transaction mode, which switches servers under connections that
	// stay up) asks which server answers first; any other returns Epoch.
	// Its errors are the UnitOfWork's (domain.CodeUnavailable): the
	// store cannot say now.
	Confirm(ctx context.Context) (uint64, error)
}
