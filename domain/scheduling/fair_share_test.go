package scheduling

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
)

// A workspace holding its share is offered a slot after those below it,
// whichever was served last; within each, the one served least recently
// first.
func TestHoldingsOfferASlotBelowTheShareFirst(t *testing.T) {
	h := NewHoldings(4)
	full, a, b := uuid.New(), uuid.New(), uuid.New()
	for range 2 {
		h.Take(full)
	}
	served := map[uuid.UUID]uint64{full: 1, a: 3, b: 2}
	// Three workspaces with work: a share of one slot each.
	assert.Equal(t, []uuid.UUID{b, a, full}, slices.Collect(h.Order([]uuid.UUID{full, a, b}, served)))
}

// The spare slots go to a workspace whose slots come back within the
// hold, or one holding less than its share with one more workspace; not
// to one of long calls at its share.
func TestHoldingsKeepTheSpareFromAWorkspaceOfLongCalls(t *testing.T) {
	h := NewHoldings(8)
	long, short := uuid.New(), uuid.New()
	for range 7 {
		h.Take(long)
	}
	h.Give(long, 14*time.Second)
	h.Take(short)
	h.Take(short)
	h.Give(short, 100*time.Millisecond)
	assert.Equal(t, 1, h.Spare())
	assert.False(t, h.MayTakeSpare(long, []uuid.UUID{long}, time.Second))
	assert.True(t, h.MayTakeSpare(short, []uuid.UUID{long, short}, time.Second))
	assert.True(t, h.MayTakeSpare(uuid.New(), []uuid.UUID{long}, time.Second), "a newcomer holds less than its share")
}
