package dispatch_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain/dispatch"
)

// An operation's end wakes the Dispatchers, so the next event of its job's
// ordering key, which could not be claimed until then, goes out at once;
// the end is still told to the waiters.
func TestAnOperationsEndWakesTheDispatchers(t *testing.T) {
	signal := memory.NewSignal()
	ends := memory.NewSignal()
	heard := &heardEnds{}
	ends.Listen(heard)
	woken := dispatch.WakeOnEnds(ends, signal)

	woken.Ended()
	select {
	case <-signal.Wake():
		t.Fatal("woken by no end")
	default:
	}

	id := uuid.New()
	woken.Ended(id)
	select {
	case <-signal.Wake():
	default:
		t.Fatal("an end did not wake the Dispatchers")
	}
	require.Equal(t, []uuid.UUID{id}, heard.ids, "the waiters still hear it")
}

type heardEnds struct{ ids []uuid.UUID }

func (h *heardEnds) Heard(ids []uuid.UUID) { h.ids = append(h.ids, ids...) }
func (h *heardEnds) Missed()               {}
