package ports

import (
	"context"
	"time"

	"github.com/oncehq/once/domain/model"
)

// DestinationStates holds, for the whole fleet of workers, one record per
// destination: its pace (the token bucket and the rate learnt from its
// 429s), its circuit breaker (open until when, and the lease of its one
// half-open probe) and an operator's pause. Every worker's Gate reads and
// writes the same records, so a 429, a breaker opening, a probe or a
// pause seen by one is obeyed by all (domain/destinations decides what a
// record means; the store only keeps it and fences the writes).
//
// A key is a destination's string (model.Destination.String: "shopify/my-shop")
// or a platform's system name ("amazon"), which is the platform's own
// record (its breaker and its application-wide bucket).
//
// Each call is one short round trip (Swap that loses a race may make a
// second one to read what won). An error means the store could not be
// asked (unreachable, timed out, ctx ended): nothing was written, and the
// caller decides what that means (the Gate refuses the call for a moment).
type DestinationStates interface {
	// Load is key's record: Version 0 and no State when nobody wrote it.
	Load(ctx context.Context, key string) (model.DestinationRecord, error)
	// Swap writes state as key's record if its version is still version
	// (0: nobody wrote it yet), moving the version on: swapped true and
	// the record written. Otherwise nothing is written: swapped false and
	// the record as it is now, to decide again from. Of several Swaps from
	// one version, exactly one is swapped.
	//
	// keep is how long the record is kept if nothing writes it again
	// (0: until a write says otherwise): then the store may forget it, and
	// a Load reads version 0. A fleet calls hundreds of thousands of shops
	// over its life; a record that holds nothing a worker needs (no pause
	// until resumed) is not kept for ever.
	Swap(ctx context.Context, key string, version int64, state []byte, keep time.Duration) (current model.DestinationRecord, swapped bool, err error)
}
