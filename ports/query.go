package ports

import (
	"context"

	"github.com/google/uuid"
)

// Query runs read in one transaction of workspace (UnitOfWork.Transact) and
// returns what it read, with Transact's error: the use cases' reads, and
// their writes that answer with a value.
func Query[T any](ctx context.Context, uow UnitOfWork, workspace uuid.UUID, read func(ctx context.Context, tx Tx) (T, error)) (T, error) {
	var v T
	err := uow.Transact(ctx, workspace, func(ctx context.Context, tx Tx) error {
		var err error
		v, err = read(ctx, tx)
		return err
	})
	return v, err
}
