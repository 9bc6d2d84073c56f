package memory

import (
	"context"
	"time"

	"github.com/oncehq/once/ports"
)

// OutboxPartitions implements ports.OutboxPartitions for the memory store,
// which has no slices: a deleted event costs nothing here, so retention
// deletes dispatched events one by one, up to the full horizon.
type OutboxPartitions struct{}

var _ ports.OutboxPartitions = OutboxPartitions{}

// NewOutboxPartitions returns the memory store's OutboxPartitions.
func NewOutboxPartitions() OutboxPartitions { return OutboxPartitions{} }

// Prepare implements ports.OutboxPartitions: nothing to make.
func (OutboxPartitions) Prepare(context.Context, time.Time) (int, error) { return 0, nil }

// DropDispatchedBefore implements ports.OutboxPartitions: nothing to drop,
// every dispatched event before `before` is left to the row deletion.
func (OutboxPartitions) DropDispatchedBefore(_ context.Context, before time.Time) (int, time.Time, error) {
	return 0, before, nil
}
