package postgres_test

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// A media's processing is an operation on the media row.
var _ = registerKindRow("media", kindRow{
	seed: func(ctx context.Context, tx ports.Tx, r seedRefs) error {
		return tx.Media().Create(ctx, model.Media{
			ID: uuid.New(), WorkspaceID: r.ws, Filename: "a.png", ContentType: "image/png", SizeBytes: 1,
			ObjectKey: "k", Status: model.MediaAwaitingUpload, CreatedAt: t0, UpdatedAt: t0,
		})
	},
})
