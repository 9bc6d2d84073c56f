package app

import (
	"errors"
	"time"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/media"
	"github.com/oncehq/once/domain/retention"
	"github.com/oncehq/once/domain/sweep"
)

// RetentionConfig is how long finished records are kept and how the
// maintenance of every process removes them: dispatched events (whole
// partitions of OutboxPartitionInterval on PostgreSQL), succeeded or
// failed operations, finished tasks, dead letters (from the moment they
// became one).
type RetentionConfig struct {
	CleanupInterval         time.Duration `env:"ONCE_CLEANUP_INTERVAL"`
	CleanupBatch            int           `env:"ONCE_CLEANUP_BATCH"`
	OutboxRetention         time.Duration `env:"ONCE_OUTBOX_RETENTION"`
	OutboxPartitionInterval time.Duration `env:"ONCE_OUTBOX_PARTITION_INTERVAL"`
	OperationRetention      time.Duration `env:"ONCE_OPERATION_RETENTION"`
	TaskRetention           time.Duration `env:"ONCE_TASK_RETENTION"`
	DeadLetterRetention     time.Duration `env:"ONCE_DEAD_LETTER_RETENTION"`
	MediaUploadExpiry       time.Duration `env:"ONCE_MEDIA_UPLOAD_EXPIRY"`
}

func defaultRetentionConfig() RetentionConfig {
	return RetentionConfig{
		CleanupInterval: time.Minute, CleanupBatch: sweep.DefaultBatch,
		OutboxRetention: dispatch.DefaultRetention, OutboxPartitionInterval: postgres.DefaultPartitionWidth,
		OperationRetention: retention.DefaultOperations, TaskRetention: retention.DefaultTasks, DeadLetterRetention: retention.DefaultDeadLetters,
		MediaUploadExpiry: media.DefaultUploadExpiry,
	}
}

// RetentionPolicy is how long finished operations, tasks and dead letters
// are kept.
func (c RetentionConfig) RetentionPolicy() retention.Policy {
	return retention.Policy{Operations: c.OperationRetention, Tasks: c.TaskRetention, DeadLetters: c.DeadLetterRetention}
}

// Validate checks the cleanup and the retentions, which must outlast the
// idempotency keys (idempotencyRetention).
func (c RetentionConfig) Validate(idempotencyRetention time.Duration) error {
	return errors.Join(
		invalidIf(c.CleanupInterval <= 0, "ONCE_CLEANUP_INTERVAL must be positive"),
		invalidIf(outside(c.CleanupBatch, 1, 100000), "ONCE_CLEANUP_BATCH must be between 1 and 100000"),
		invalidIf(c.OutboxRetention < time.Hour, "ONCE_OUTBOX_RETENTION must be at least 1h: dispatched events are kept for troubleshooting"),
		invalidIf(outside(c.OutboxPartitionInterval, time.Minute, 31*24*time.Hour), "ONCE_OUTBOX_PARTITION_INTERVAL must be between 1m and 744h"),
		c.RetentionPolicy().Validate(idempotencyRetention),
		invalidIf(c.MediaUploadExpiry < media.MinUploadExpiry, "ONCE_MEDIA_UPLOAD_EXPIRY must be at least 2h: it must outlast a pre-signed upload URL"),
	)
}

func (RetentionConfig) settings() settingGroup { return retentionSettings }

var retentionSettings = settingGroup{
	title: "Retention and cleanup",
	vars: map[string]setting{
		"ONCE_CLEANUP_INTERVAL": {
			help: "how often expired idempotency keys, old outbox events, and expired operations, tasks and dead letters are deleted",
			doc:  "how often expired idempotency records, and finished operations, tasks and dead letters past their retention, are cleaned (with jitter)",
		},
		"ONCE_CLEANUP_BATCH": {
			help: "rows deleted per cleanup statement",
			doc:  "rows deleted per transaction by the cleanup",
		},
		"ONCE_OUTBOX_RETENTION": {
			help: "how long dispatched events are kept (at least 1h)",
			doc:  "dispatched events are kept this long, then removed with their partition (so up to one `ONCE_OUTBOX_PARTITION_INTERVAL` longer; [retention](operating.md#the-outboxs-partitions))",
		},
		"ONCE_OUTBOX_PARTITION_INTERVAL": {
			help: "time slice of a partition of dispatched events (PostgreSQL): retention drops whole slices, so events stay up to retention plus one slice (1m to 744h; the same in every process)",
			doc:  "the time slice of a partition of dispatched events (PostgreSQL): retention drops whole slices, the Dispatcher's process makes them two slices ahead. `1m` to `744h`; the same in every process (a change takes effect at the first slice no partition covers yet)",
		},
		"ONCE_OPERATION_RETENTION": {
			help: "how long a succeeded or failed operation is kept (at least 24h and ONCE_IDEMPOTENCY_RETENTION)",
			doc:  "succeeded and failed operations are kept this long after they finished, then deleted ([retention](operating.md#retention)); at least `24h` and `ONCE_IDEMPOTENCY_RETENTION`",
		},
		"ONCE_TASK_RETENTION": {
			help: "how long a finished task (catalog sync, material transfer, failed publication, unbilled AI task) is kept (same minimum)",
			doc:  "the same for finished tasks: catalog syncs, material transfers (with their items), failed publications, AI tasks without a billing record",
		},
		"ONCE_MEDIA_UPLOAD_EXPIRY": {
			help: "how long registered media may await their upload before they are deleted, with their object (at least 2h)",
			doc:  "media still awaiting their upload this long after registration are deleted, with their object if any, and taken out of the product drafts naming them, by the cleanup of PostgreSQL deployments ([retention](operating.md#retention)); at least `2h`, longer than a pre-signed upload URL lives",
		},
		"ONCE_DEAD_LETTER_RETENTION": {
			help: "how long a dead letter is kept from the moment it became one (at least 24h, at most ONCE_OPERATION_RETENTION)",
			doc:  "dead letters are kept this long after they became one; at least `24h`, at most `ONCE_OPERATION_RETENTION`",
		},
	},
}
