package app_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/webhooktest"
)

// A store's verification ends, and its end reaches a subscribed receiver
// written with the standardwebhooks npm package, through the outbox, the
// Dispatcher and a worker, over the guarded client (the operator opened
// loopback for the test's receiver).
// On PostgreSQL the secret scan then finds no secret in any table, the
// outbox's payloads included.
func TestAnOperationsEndIsDeliveredToASubscribedReceiver(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testWebhookDelivery(t, nil) })
	t.Run("postgres", func(t *testing.T) { testWebhookDelivery(t, pgtest.New(t)) })
}

func testWebhookDelivery(t *testing.T, db *pgtest.DB) {
	cfg := apitest.Config("")
	if db != nil {
		cfg = apitest.Config(db.AppDSN)
	}
	cfg.Dispatcher, cfg.Worker = true, true
	cfg.FetchAllowCIDRs = "127.0.0.0/8"
	s := apitest.Start(t, cfg, db)

	created, receiver := subscribedReceiver(t, s, model.WebhookOperationSucceeded)

	// A second endpoint whose receiver is down.
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	res := s.Do(t, http.MethodPost, "/v1/webhook-endpoints",
		map[string]any{"url": down.URL + "/hook", "event_types": []string{model.WebhookOperationSucceeded}},
		map[string]string{"Idempotency-Key": uuid.NewString()})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	var broken httpapi.WebhookEndpointCreated
	res.JSON(t, &broken)

	verifiedStore(t, s)
	delivery := nextDelivery(t, s, receiver)
	require.Equal(t, model.WebhookDestination(created.ID), delivery.Destination)

	// The delivery to the receiver that is down waits for its next
	// attempt, and says why.
	var waiting httpapi.ListOf[httpapi.WebhookDelivery]
	apitest.Eventually(t, 30*time.Second, "the failed delivery listed", func() bool {
		res := s.Do(t, http.MethodGet, "/v1/webhook-endpoints/"+broken.ID.String()+"/deliveries", nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		res.JSON(t, &waiting)
		return len(waiting.Items) == 1 && waiting.Items[0].LastError != ""
	})
	d := waiting.Items[0]
	require.Equal(t, "waiting", d.State)
	require.Equal(t, model.WebhookOperationSucceeded, d.EventType)
	require.Contains(t, d.LastError, "503")
	require.NotNil(t, d.NextAttemptAt)
	require.Zero(t, d.Attempts, "an outage spends no attempt")
	res = s.Do(t, http.MethodGet, "/v1/webhook-endpoints/"+created.ID.String()+"/deliveries", nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var none httpapi.ListOf[httpapi.WebhookDelivery]
	res.JSON(t, &none)
	require.Empty(t, none.Items, "the delivered one is done")
}

// subscribedReceiver creates an endpoint of s subscribed to eventType,
// delivering to a receiver written with the standardwebhooks npm package:
// the receiver needs the endpoint's secret, the endpoint the receiver's
// URL.
func subscribedReceiver(t *testing.T, s *apitest.Server, eventType string) (httpapi.WebhookEndpointCreated, *webhooktest.Receiver) {
	t.Helper()
	res := s.Do(t, http.MethodPost, "/v1/webhook-endpoints",
		map[string]any{"url": "http://127.0.0.1:9/placeholder/" + uuid.NewString(), "event_types": []string{eventType}},
		map[string]string{"Idempotency-Key": uuid.NewString()})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	var created httpapi.WebhookEndpointCreated
	res.JSON(t, &created)
	receiver := webhooktest.Start(t, created.Secret)
	res = s.Do(t, http.MethodPatch, "/v1/webhook-endpoints/"+created.ID.String(), map[string]any{"url": receiver.URL}, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	return created, receiver
}

// nextDelivery is the outbox event of the receiver's next request, which
// must have verified, for the first time: its webhook-id is a
// webhook.deliver event's id.
func nextDelivery(t *testing.T, s *apitest.Server, receiver *webhooktest.Receiver) model.OutboxEvent {
	t.Helper()
	v := receiver.Next(t)
	require.True(t, v.OK, "%+v", v)
	require.True(t, v.First)
	for _, e := range s.Events(t) {
		if e.ID.String() == v.ID {
			require.Equal(t, model.EventWebhookDeliver, e.Type)
			return e
		}
	}
	t.Fatalf("webhook-id %s is no outbox event's id", v.ID)
	return model.OutboxEvent{}
}
