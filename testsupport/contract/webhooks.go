package contract

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// webhookEndpoints is tx's webhook endpoint repository.
func webhookEndpoints(tx ports.Tx) ports.WebhookEndpointRepository {
	return ports.Repository[ports.WebhookEndpointRepository](tx)
}

// webhookEndpointTable is the webhook_endpoints table to the table
// contract (tables.go).
var webhookEndpointTable = table[model.WebhookEndpoint]{
	repo: func(tx ports.Tx) tableRepo[model.WebhookEndpoint] { return webhookEndpoints(tx) },
	keys: func(e *model.WebhookEndpoint) (*uuid.UUID, *uuid.UUID) { return &e.ID, &e.WorkspaceID },
	row:  func(_ *testing.T, _ Harness, ws uuid.UUID) model.WebhookEndpoint { return newWebhookEndpoint(ws) },
	full: func(e *model.WebhookEndpoint) {
		e.SecretVersion = 2
		e.SealedPreviousSecret = []byte{0, 0xff, 7}
		e.PreviousSecretExpiresAt = e.CreatedAt.Add(24 * time.Hour)
	},
	stored: func(e model.WebhookEndpoint) model.WebhookEndpoint {
		e.EventTypes = slices.Clone(e.EventTypes)
		e.SealedSecret = bytes.Clone(e.SealedSecret)
		e.SealedPreviousSecret = bytes.Clone(e.SealedPreviousSecret)
		if !e.PreviousSecretExpiresAt.IsZero() {
			e.PreviousSecretExpiresAt = dbTime(e.PreviousSecretExpiresAt)
		}
		e.CreatedAt, e.UpdatedAt = dbTime(e.CreatedAt), dbTime(e.UpdatedAt)
		return e
	},
	scramble: func(e *model.WebhookEndpoint) { e.SealedSecret[0] ^= 0xff; e.EventTypes[0] = "scrambled" },
	updates:  "replaces the URL, event types, enabled and secrets",
	mutable: func(e *model.WebhookEndpoint) {
		e.URL = "https://hooks.example.com/other"
		e.EventTypes = []string{model.WebhookDeadLetterCreated}
		e.Enabled = !e.Enabled
		e.SecretVersion++
		e.SealedPreviousSecret, e.SealedSecret = e.SealedSecret, []byte{9, 0, 0xfe}
		e.PreviousSecretExpiresAt = e.UpdatedAt.Add(24 * time.Hour)
		e.UpdatedAt = e.UpdatedAt.Add(time.Minute)
	},
	immutable: func(e *model.WebhookEndpoint) { e.CreatedAt = e.CreatedAt.Add(-time.Hour) },
}

// newWebhookEndpoint returns an unsaved, enabled endpoint of workspace
// with a fresh time-ordered id and a sealed secret holding every byte
// value.
func newWebhookEndpoint(workspace uuid.UUID) model.WebhookEndpoint {
	at := now()
	sealed := make([]byte, 0, 256)
	for b := range 256 {
		sealed = append(sealed, byte(b))
	}
	return model.WebhookEndpoint{
		ID: uuid.Must(uuid.NewV7()), WorkspaceID: workspace, URL: "https://hooks.example.com/once",
		EventTypes: []string{model.WebhookOperationSucceeded, model.WebhookOperationFailed},
		Enabled:    true, SecretVersion: 1, SealedSecret: sealed, CreatedAt: at, UpdatedAt: at,
	}
}

func testWebhookEndpoints(t *testing.T, h Harness) {
	t.Run("table", func(t *testing.T) { webhookEndpointTable.check(t, h) })

	t.Run("an endpoint without a previous secret keeps none", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := newWebhookEndpoint(ws)
		e.EventTypes = nil
		require.NoError(t, webhookEndpointTable.create(t, h, e))
		got, err := webhookEndpointTable.get(t, h, ws, e.ID)
		require.NoError(t, err)
		require.Nil(t, got.SealedPreviousSecret)
		require.True(t, got.PreviousSecretExpiresAt.IsZero())
		require.Empty(t, got.EventTypes)
	})

	t.Run("count locked: parallel creates cannot pass a cap or write one URL twice", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		require.NoError(t, webhookEndpointTable.create(t, h, newWebhookEndpoint(other)))
		// Each writer counts under the lock and creates only below the
		// cap and for a URL not taken, as the use case does; they start
		// together, so without the lock several count the same number.
		const writers, maxEndpoints = 12, 4
		start := make(chan struct{})
		created := make(chan uuid.UUID, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				e := newWebhookEndpoint(ws)
				e.URL = fmt.Sprintf("https://hooks.example.com/%d", i%(writers/2)) // each URL twice
				err := h.UoW.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
					n, err := webhookEndpoints(tx).CountLocked(ctx, e.URL, uuid.Nil)
					if err != nil || n.All >= maxEndpoints || n.SameURL != uuid.Nil {
						return err
					}
					created <- e.ID
					return webhookEndpoints(tx).Create(ctx, e)
				})
				assert.NoError(t, err)
			}()
		}
		close(start)
		wg.Wait()
		close(created)
		require.Len(t, created, maxEndpoints, "the cap held")
		all := mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) ([]model.WebhookEndpoint, error) {
			return webhookEndpoints(tx).List(ctx, ports.ListQuery{Limit: 100})
		})
		require.Len(t, all, maxEndpoints)
		urls := map[string]bool{}
		for _, e := range all {
			require.False(t, urls[e.URL], "%s written twice", e.URL)
			urls[e.URL] = true
		}

		n := mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) (ports.WebhookEndpointCount, error) {
			return webhookEndpoints(tx).CountLocked(ctx, all[0].URL, uuid.Nil)
		})
		require.Equal(t, ports.WebhookEndpointCount{All: maxEndpoints, SameURL: all[0].ID}, n, "the other workspace's endpoint is not counted")
		n = mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) (ports.WebhookEndpointCount, error) {
			return webhookEndpoints(tx).CountLocked(ctx, all[0].URL, all[0].ID)
		})
		require.Equal(t, uuid.Nil, n.SameURL, "except is not its own duplicate")
	})

	t.Run("list is the workspace's endpoints newest first", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		var want []uuid.UUID
		for range 3 {
			e := newWebhookEndpoint(ws)
			require.NoError(t, webhookEndpointTable.create(t, h, e))
			want = append([]uuid.UUID{e.ID}, want...)
		}
		require.NoError(t, webhookEndpointTable.create(t, h, newWebhookEndpoint(other)))
		list := func(q ports.ListQuery) []uuid.UUID {
			got := mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) ([]model.WebhookEndpoint, error) {
				return webhookEndpoints(tx).List(ctx, q)
			})
			return ids(got, func(e model.WebhookEndpoint) uuid.UUID { return e.ID })
		}
		require.Equal(t, want, list(ports.ListQuery{Limit: 10}))
		require.Equal(t, want[1:2], list(ports.ListQuery{Limit: 1, StartingAfter: want[0]}))
	})

	t.Run("delete removes the endpoint of its workspace only", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		e := newWebhookEndpoint(ws)
		require.NoError(t, webhookEndpointTable.create(t, h, e))
		del := func(ws uuid.UUID) error {
			return transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return webhookEndpoints(tx).Delete(ctx, e.ID) })
		}
		requireCode(t, del(other), domain.CodeNotFound)
		_, err := webhookEndpointTable.get(t, h, ws, e.ID)
		require.NoError(t, err)

		require.NoError(t, del(ws))
		_, err = webhookEndpointTable.get(t, h, ws, e.ID)
		requireCode(t, err, domain.CodeNotFound)
		requireCode(t, webhookEndpointTable.update(t, h, e), domain.CodeNotFound)
		requireCode(t, del(ws), domain.CodeNotFound)
		got := mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) ([]model.WebhookEndpoint, error) {
			return webhookEndpoints(tx).List(ctx, ports.ListQuery{Limit: 10})
		})
		require.Empty(t, got)
	})

	t.Run("subscribed are the enabled endpoints of the event type", func(t *testing.T) {
		ws, other := newWorkspace(t, h), newWorkspace(t, h)
		wants := newWebhookEndpoint(ws) // succeeded and failed
		disabled := newWebhookEndpoint(ws)
		disabled.Enabled = false
		elsewhere := newWebhookEndpoint(ws)
		elsewhere.EventTypes = []string{model.WebhookDeadLetterCreated}
		for _, e := range []model.WebhookEndpoint{wants, disabled, elsewhere, newWebhookEndpoint(other)} {
			require.NoError(t, webhookEndpointTable.create(t, h, e))
		}
		subscribed := func(ws uuid.UUID, eventType string) []uuid.UUID {
			got := mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) ([]model.WebhookEndpoint, error) {
				return webhookEndpoints(tx).Subscribed(ctx, eventType)
			})
			require.NotNil(t, got)
			return ids(got, func(e model.WebhookEndpoint) uuid.UUID { return e.ID })
		}
		require.Equal(t, []uuid.UUID{wants.ID}, subscribed(ws, model.WebhookOperationFailed))
		require.Equal(t, []uuid.UUID{elsewhere.ID}, subscribed(ws, model.WebhookDeadLetterCreated))
		require.Empty(t, subscribed(ws, model.WebhookOperationCancelled))
		got := mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) ([]model.WebhookEndpoint, error) {
			return webhookEndpoints(tx).Subscribed(ctx, model.WebhookOperationFailed)
		})
		require.Equal(t, webhookEndpointTable.stored(wants), got[0], "every field, secrets included")
	})

	t.Run("change saves what fn leaves, and nothing when fn fails", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := newWebhookEndpoint(ws)
		require.NoError(t, webhookEndpointTable.create(t, h, e))
		changed, want := webhookEndpointTable.change(e)
		saved := mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) (model.WebhookEndpoint, error) {
			return webhookEndpoints(tx).Change(ctx, e.ID, func(cur *model.WebhookEndpoint) error {
				require.Equal(t, webhookEndpointTable.stored(e), *cur, "fn gets the endpoint as stored")
				*cur = changed
				return nil
			})
		})
		require.Equal(t, want, webhookEndpointTable.stored(saved))
		got, err := webhookEndpointTable.get(t, h, ws, e.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)

		_, err = query(t, h, ws, func(ctx context.Context, tx ports.Tx) (model.WebhookEndpoint, error) {
			return webhookEndpoints(tx).Change(ctx, e.ID, func(cur *model.WebhookEndpoint) error {
				cur.Enabled = !cur.Enabled
				return errRollback
			})
		})
		require.ErrorIs(t, err, errRollback)
		got, err = webhookEndpointTable.get(t, h, ws, e.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)
		_, err = query(t, h, ws, func(ctx context.Context, tx ports.Tx) (model.WebhookEndpoint, error) {
			return webhookEndpoints(tx).Change(ctx, uuid.New(), func(*model.WebhookEndpoint) error { return nil })
		})
		requireCode(t, err, domain.CodeNotFound)
	})

	t.Run("a change waits for a concurrent one and builds on it", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := newWebhookEndpoint(ws)
		require.NoError(t, webhookEndpointTable.create(t, h, e))
		bump := func(ctx context.Context, tx ports.Tx) error {
			_, err := webhookEndpoints(tx).Change(ctx, e.ID, func(cur *model.WebhookEndpoint) error {
				cur.SecretVersion++
				return nil
			})
			return err
		}
		firstChanged, release := make(chan struct{}), make(chan struct{})
		firstDone := make(chan error, 1)
		go func() {
			firstDone <- transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
				err := bump(ctx, tx)
				close(firstChanged)
				<-release
				return err
			})
		}()
		<-firstChanged
		secondDone := make(chan error, 1)
		go func() { secondDone <- transact(t, h, ws, bump) }()
		close(release)
		require.NoError(t, <-firstDone)
		require.NoError(t, within(t, 30*time.Second, "the second change", func() error { return <-secondDone }))
		got, err := webhookEndpointTable.get(t, h, ws, e.ID)
		require.NoError(t, err)
		require.Equal(t, e.SecretVersion+2, got.SecretVersion, "neither change is lost")
	})

	t.Run("a rolled back delete keeps the endpoint", func(t *testing.T) {
		ws := newWorkspace(t, h)
		e := newWebhookEndpoint(ws)
		require.NoError(t, webhookEndpointTable.create(t, h, e))
		err := transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			if err := webhookEndpoints(tx).Delete(ctx, e.ID); err != nil {
				return err
			}
			return errRollback
		})
		require.ErrorIs(t, err, errRollback)
		_, err = webhookEndpointTable.get(t, h, ws, e.ID)
		require.NoError(t, err)
	})
}
