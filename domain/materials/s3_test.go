package materials_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/materialsim"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain/materials"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/s3test"
)

// A transfer into a real S3 store, its worker dying after storing an item
// and before recording it: the redelivery records the object already
// there, and every item ends in the bucket with the source's bytes.
func TestTransferIntoS3SurvivesACrashBetweenStoringAndRecording(t *testing.T) {
	h := newHarness(t)
	store := s3test.Start(t).NewStore(t)
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	handler := materials.NewTransferHandler(h.crash, h.source, store, system.NewClock(), log)
	ctx := context.Background()
	sources := urls(3)
	tr, _, msg := h.start(t, ctx, sources)
	h.crash.CrashNext(3) // transactions: 1 start, 2 item 0 done, 3 item 1 done

	require.Error(t, handler.Handle(ctx, msg))
	require.NoError(t, handler.Handle(ctx, msg))

	got, op := h.state(t, tr)
	assert.Equal(t, model.TaskSucceeded, got.Status)
	assert.Equal(t, model.OperationSucceeded, op.Status)
	require.Len(t, got.Items, len(sources))
	for i, it := range got.Items {
		data, info, err := store.Get(ctx, materials.ObjectKey(h.ws, tr.ID, i))
		require.NoError(t, err, "item %d", i)
		assert.Equal(t, materialsim.Content(sources[i]), data, "item %d", i)
		assert.Equal(t, info.Size, it.SizeBytes, "item %d", i)
		assert.Equal(t, materialsim.ContentType, info.ContentType, "item %d", i)
	}
	assert.Equal(t, 2, h.source.Fetches(sources[1]), "fetched again, stored once (If-None-Match)")
}
