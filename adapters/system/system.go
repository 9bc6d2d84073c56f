// Package system adapts the machine's clock and random source to the ports
// that tell time and make ids.
package system

import (
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/ports"
)

var (
	_ ports.Clock       = Clock{}
	_ ports.IDGenerator = IDs{}
)

// Clock is the wall clock, in UTC so that stored times compare and print the
// same wherever the process runs.
type Clock struct{}

// NewClock returns the wall clock.
func NewClock() Clock { return Clock{} }

// Now returns the current time in UTC, at the microsecond precision
// PostgreSQL keeps, so a time in a response equals the time read back later.
func (Clock) Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// IDs makes UUIDv7 ids: time-ordered, so B-tree indexes on them stay compact.
type IDs struct{}

// NewIDs returns the UUIDv7 generator.
func NewIDs() IDs { return IDs{} }

// NewID returns a new UUIDv7. uuid.NewV7 fails only if the system random
// source fails, which crypto/rand treats as fatal anyway.
func (IDs) NewID() uuid.UUID { return uuid.Must(uuid.NewV7()) }
