package postgres_test

import (
	"context"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// A transfer needs nothing besides its task state; its items are a table
// it fills.
var _ = registerKindRow("material_transfers", kindRow{
	// A transfer's items go with it.
	ownRetention: func(w retentionWorld, ws uuid.UUID, gone, _ tableRows) func() {
		transfer := gone["material_transfers"][0]
		w.exec(`INSERT INTO material_transfer_items (transfer_id, idx, workspace_id, source_url) VALUES ($1, 0, $2, 'u'), ($1, 1, $2, 'u')`, transfer, ws)
		return func() {
			var items int
			require.NoError(w.t, w.super.QueryRow(`SELECT count(*) FROM material_transfer_items WHERE transfer_id = $1`, transfer).Scan(&items))
			assert.Zero(w.t, items, "a transfer's items go with it")
		}
	},
	seed: func(ctx context.Context, tx ports.Tx, r seedRefs) error {
		return ports.Repository[ports.MaterialTransferRepository](tx).Create(ctx, model.MaterialTransfer{
			TaskState: r.task(), Items: []model.MaterialItem{{Index: 0, SourceURL: "https://example.com/a.png"}},
		})
	},
})
