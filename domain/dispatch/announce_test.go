package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// An event the Dispatcher dead-letters, after its last failed publish or
// after its lease expired once too often, is announced to the endpoints
// subscribed to dead_letter.created in the transaction that parks it, as a
// job the worker gives up on is.
func TestTheDispatchersDeadLettersAreAnnouncedToSubscribedEndpoints(t *testing.T) {
	for _, store := range []string{"memory", "postgres"} {
		t.Run(store, func(t *testing.T) {
			t.Run("last publish failed", func(t *testing.T) {
				e, ws := announceEnv(t, store)
				id := e.appendEvents(t, ws, 1)[0]
				pub := &recorder{}
				pub.setFail(func([]ports.Message) error { return errors.New("broker down") })
				d := e.dispatcher(t, dispatch.Config{MaxAttempts: 2, BackoffMax: time.Minute}, pub)
				for range 3 {
					_, err := d.RunOnce(context.Background())
					require.NoError(t, err)
					e.clock.Advance(time.Minute + time.Second)
				}
				require.Equal(t, model.OutboxDeadLetter, e.event(t, ws, id).Status)
				assertAnnounced(t, e, ws, id)
			})
			t.Run("lease expired once too often", func(t *testing.T) {
				e, ws := announceEnv(t, store)
				id := e.appendEvents(t, ws, 1)[0]
				hung := make(chan struct{})
				release := make(chan struct{})
				t.Cleanup(func() { close(release) })
				hangs := publisherFunc(func(context.Context, ...ports.Message) error {
					hung <- struct{}{}
					<-release
					return nil
				})
				const lease = 30 * time.Second
				cfg := dispatch.Config{MaxAttempts: 1, Lease: lease}
				died := runUntilItDies(e.dispatcher(t, cfg, hangs), hung)
				require.True(t, died, "the first Dispatcher hangs on the event")
				e.clock.Advance(lease + time.Second)
				cfg.Owner = "dispatcher-2"
				_, err := e.dispatcher(t, cfg, &recorder{}).RunOnce(context.Background())
				require.NoError(t, err)
				require.Equal(t, model.OutboxDeadLetter, e.event(t, ws, id).Status)
				assertAnnounced(t, e, ws, id)
			})
		})
	}
}

// announceEnv is an env on store with a workspace that has one endpoint
// subscribed to dead_letter.created.
func announceEnv(t *testing.T, store string) (*env, uuid.UUID) {
	t.Helper()
	e, ws := newEnv(t), uuid.New()
	if store == "postgres" {
		e, _, ws = postgresEnv(t)
	}
	require.NoError(t, e.uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		return ports.Repository[ports.WebhookEndpointRepository](tx).Create(ctx, model.WebhookEndpoint{
			ID: uuid.New(), WorkspaceID: ws, URL: "https://hooks.example.com/once",
			EventTypes: []string{model.WebhookDeadLetterCreated}, Enabled: true, SecretVersion: 1,
			SealedSecret: []byte("sealed"), CreatedAt: e.clock.Now(), UpdatedAt: e.clock.Now(),
		})
	}))
	return e, ws
}

// assertAnnounced checks that ws's outbox holds one delivery of
// dead_letter.created about the event id.
func assertAnnounced(t *testing.T, e *env, ws, id uuid.UUID) {
	t.Helper()
	var deliveries []model.OutboxEvent
	require.NoError(t, e.uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		pending, err := tx.Outbox().List(ctx, model.OutboxPending, 100)
		for _, ev := range pending {
			if ev.Type == model.EventWebhookDeliver {
				deliveries = append(deliveries, ev)
			}
		}
		return err
	}))
	require.Len(t, deliveries, 1, "one delivery of the dead letter's news")
	var d model.WebhookDelivery
	require.NoError(t, json.Unmarshal(deliveries[0].Payload, &d))
	assert.Equal(t, model.WebhookDeadLetterCreated, d.Event.Type)
	assert.Equal(t, id, d.Event.Data.EventID)
	assert.Equal(t, "test.event", d.Event.Data.EventType)
}
