package contract

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// testOutboxUndeliveredByDestination: what is not dispatched, counted per
// destination with a prefix, in the workspace only, reading at most limit
// events.
func testOutboxUndeliveredByDestination(t *testing.T, h Harness) {
	ws, other := newWorkspace(t, h), newWorkspace(t, h)
	at := now()
	hookA, hookB := "webhook/"+uuid.NewString(), "webhook/"+uuid.NewString()
	if hookB < hookA {
		hookA, hookB = hookB, hookA
	}
	// to appends an event to destination, time-ordered by id, created at
	// created and due at due.
	to := func(workspace uuid.UUID, destination string, created, due time.Time) model.OutboxEvent {
		e := newEvent(t, workspace, created)
		e.ID, e.Destination, e.NextAttemptAt = uuid.Must(uuid.NewV7()), destination, due
		appendEvents(t, h, workspace, e)
		return e
	}
	// Claimed one at a time while nothing else is due: two given up on,
	// the newer with the error shown, and one delivered.
	for _, lastError := range []string{"webhook receiver refused the delivery with 400", "webhook receiver refused the delivery with 410"} {
		e := to(ws, hookA, at.Add(-time.Hour), at.Add(-time.Hour))
		require.Equal(t, []uuid.UUID{e.ID}, eventIDs(claimDue(t, h, ws, "d", at, 1)))
		require.True(t, deadLetter(t, h, ws, "d", e.ID, lastError))
	}
	delivered := to(ws, hookB, at.Add(-time.Hour), at.Add(-time.Hour))
	require.Equal(t, []uuid.UUID{delivered.ID}, eventIDs(claimDue(t, h, ws, "d", at, 1)))
	require.Equal(t, 1, markDispatched(t, h, ws, "d", at, delivered.ID))
	// Waiting: two to A (the older created first), one to B, one job
	// elsewhere, and another workspace's.
	to(ws, hookA, at.Add(-2*time.Minute), at.Add(2*time.Hour))
	to(ws, hookA, at.Add(-time.Minute), at.Add(time.Hour))
	to(ws, hookB, at, at.Add(30*time.Minute))
	to(ws, "shopify/shop-1", at, at.Add(time.Hour))
	to(other, hookA, at, at.Add(time.Minute))

	count := func(prefix string, limit int) []ports.DestinationUndelivered {
		got := mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) ([]ports.DestinationUndelivered, error) {
			return tx.Outbox().UndeliveredByDestination(ctx, prefix, limit)
		})
		for i := range got {
			got[i].OldestWaiting, got[i].NextAttempt = dbTime(got[i].OldestWaiting), dbTime(got[i].NextAttempt)
		}
		return got
	}
	require.Equal(t, []ports.DestinationUndelivered{
		{Destination: hookA, Waiting: 2, DeadLetter: 2, OldestWaiting: at.Add(-2 * time.Minute), NextAttempt: at.Add(time.Hour),
			LastError: "webhook receiver refused the delivery with 410"},
		{Destination: hookB, Waiting: 1, OldestWaiting: at, NextAttempt: at.Add(30 * time.Minute)},
	}, count("webhook/", 100))
	require.Equal(t, []string{"shopify/shop-1"}, destinations(count("shopify/", 100)))

	limited := count("webhook/", 3)
	read := 0
	for _, d := range limited {
		read += d.Waiting + d.DeadLetter
	}
	require.Equal(t, 3, read, "at most limit events read")
	require.Empty(t, count("webhook/", 0))
}

func destinations(ds []ports.DestinationUndelivered) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Destination
	}
	return out
}
