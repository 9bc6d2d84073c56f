package postgres_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	schema "github.com/oncehq/once/sql"
)

// A database at 021 whose queue holds events the workers parked under the
// old scheme (their wait written behind a prefix of last_error) migrates
// through 022 and 023 with each wait in its columns and the prefix gone from the text;
// nothing else changes, the dispatched history included, and the parked
// list and the wake after an outage find the carried-over events.
func TestMigrationToJobWaitsCarriesTheParkedEventsOver(t *testing.T) {
	t.Parallel()
	db, super := databaseBefore(t, "022")
	ctx := context.Background()

	ws := uuid.New()
	now := time.Now().UTC().Truncate(time.Microsecond)
	type row struct {
		status, destination, lastError string
		// what 022 makes of it
		kind, waitedFor, reason string
	}
	rows := map[string]row{
		"asleep":      {"pending", "shopify/shop-1", "job waits: waiting for shopify: breaker_open", "outage", "shopify", "waiting for shopify: breaker_open"},
		"probe":       {"pending", "shopify/shop-1", "job waits: waiting for shopify/shop-1: probing", "outage", "shopify/shop-1", "waiting for shopify/shop-1: probing"},
		"paced":       {"pending", "ai/default", "job waits: waiting for ai/default: paced", "paced", "ai/default", "waiting for ai/default: paced"},
		"busy":        {"pending", "material/a.example", "job waits: waiting for material/a.example: busy", "busy", "material/a.example", "waiting for material/a.example: busy"},
		"paused":      {"pending", "amazon/s1", "job waits: waiting for amazon/s1: paused", "paused", "amazon/s1", "waiting for amazon/s1: paused"},
		"unknown":     {"pending", "amazon/s1", "job waits: waiting for amazon/s1: state_unavailable", "state_unavailable", "amazon/s1", "waiting for amazon/s1: state_unavailable"},
		"throttled":   {"pending", "shopify/shop-2", "job waits: throttled by shopify/shop-2", "throttled", "shopify/shop-2", "throttled by shopify/shop-2"},
		"behind":      {"pending", "shopify/shop-1", "job waits: waiting behind an earlier job of its ordering key", "ordering", "", "waiting behind an earlier job of its ordering key"},
		"retry":       {"pending", "shopify/shop-3", "job waits: UNAVAILABLE: shopify answered 503", "retry", "shopify/shop-3", "UNAVAILABLE: shopify answered 503"},
		"in flight":   {"dispatching", "shopify/shop-1", "job waits: waiting for shopify: breaker_open", "outage", "shopify", "waiting for shopify: breaker_open"},
		"released":    {"pending", "shopify/shop-1", "broker said no", "", "", "broker said no"},
		"dead letter": {"dead_letter", "shopify/shop-1", "job failed: after 3 attempts: boom", "", "", "job failed: after 3 attempts: boom"},
		"history":     {"dispatched", "shopify/shop-1", "job waits: waiting for shopify: breaker_open", "", "", "job waits: waiting for shopify: breaker_open"},
	}
	ids := map[string]uuid.UUID{}
	for name, r := range rows {
		ids[name] = uuid.New()
		_, err := super.ExecContext(ctx, `
INSERT INTO outbox_events (id, workspace_id, event_type, aggregate_type, aggregate_id, event_payload, status,
                           attempt_count, next_attempt_at, locked_by, locked_until, last_error, created_at,
                           dispatched_at, destination)
VALUES ($1, $2, 'store.credentials.verify', 'store', gen_random_uuid(), '{}', $3, 0, $4,
        CASE WHEN $3 = 'dispatching' THEN 'd1' END, CASE WHEN $3 = 'dispatching' THEN $4::timestamptz END,
        $5, $4, CASE WHEN $3 = 'dispatched' THEN $4::timestamptz END, $6)`,
			ids[name], ws, r.status, now.Add(time.Hour), r.lastError, r.destination)
		require.NoError(t, err, name)
	}

	require.NoError(t, postgres.Migrate(ctx, db.Owner, schema.FS))

	for name, r := range rows {
		var kind, waitedFor sql.NullString
		var lastError string
		require.NoError(t, super.QueryRowContext(ctx, `SELECT wait_kind, waited_for, last_error FROM outbox_events WHERE id = $1`,
			ids[name]).Scan(&kind, &waitedFor, &lastError), name)
		require.Equal(t, r.kind, kind.String, name)
		require.Equal(t, r.waitedFor, waitedFor.String, name)
		require.Equal(t, r.reason, lastError, name)
	}

	// The application reads the carried-over waits as it reads its own.
	uow := postgres.NewUnitOfWork(db.App)
	parked, err := ports.Query(ctx, uow, ws, func(ctx context.Context, tx ports.Tx) ([]model.OutboxEvent, error) {
		return tx.Outbox().ListParked(ctx, 100)
	})
	require.NoError(t, err)
	require.Len(t, parked, 9, "the pending events parked under the old scheme")
	woken, err := ports.Query(ctx, uow, ws, func(ctx context.Context, tx ports.Tx) (int, error) {
		return tx.Outbox().Wake(ctx, model.JobWaitOutage, "shopify", now, 0, time.Millisecond)
	})
	require.NoError(t, err)
	require.Equal(t, 1, woken, "the event asleep for shopify's outage; the one in flight is the Dispatcher's")
}
