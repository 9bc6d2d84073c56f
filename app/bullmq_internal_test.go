package app

import (
	"maps"
	"slices"
	"testing"
)

// The queues checked at start-up are those of every event type a worker
// handles: a new event type joins eventTypes.
func TestBullMQEventTypesAreTheHandledOnes(t *testing.T) {
	handled := slices.Sorted(maps.Keys(newHandlers(handlersIn{})))
	if got := slices.Sorted(slices.Values(eventTypes)); !slices.Equal(got, handled) {
		t.Fatalf("eventTypes = %v, the workers handle %v", got, handled)
	}
}
