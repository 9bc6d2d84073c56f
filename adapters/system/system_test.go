package system

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestClockIsUTCAndCurrent(t *testing.T) {
	before := time.Now()
	now := NewClock().Now()
	after := time.Now()
	if now.Location() != time.UTC {
		t.Fatalf("location = %v, want UTC", now.Location())
	}
	if now.Before(before.Add(-time.Second)) || now.After(after.Add(time.Second)) {
		t.Fatalf("Now = %v, not between %v and %v", now, before, after)
	}
}

func TestIDsAreV7UniqueAndOrdered(t *testing.T) {
	ids := NewIDs()
	seen := make(map[uuid.UUID]bool)
	var prev uuid.UUID
	for i := 0; i < 1000; i++ {
		id := ids.NewID()
		if id.Version() != 7 || id.Variant() != uuid.RFC4122 {
			t.Fatalf("id %s: version %d variant %v", id, id.Version(), id.Variant())
		}
		if seen[id] {
			t.Fatalf("id %s repeated", id)
		}
		seen[id] = true
		// uuid.NewV7 is monotonic within a process.
		if i > 0 && id.String() <= prev.String() {
			t.Fatalf("id %s does not sort after %s", id, prev)
		}
		prev = id
	}
}
