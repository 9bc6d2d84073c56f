package delivery_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/fetchpolicy"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/domain/webhooks"
	"github.com/oncehq/once/domain/webhooks/delivery"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
	"github.com/oncehq/once/testsupport/webhooktest"
)

type harness struct {
	uow     ports.UnitOfWork
	svc     *webhooks.Service
	handler *delivery.Handler
	clock   *testkit.ManualClock
	admin   model.Principal
}

func newHarness(t *testing.T) harness {
	t.Helper()
	// Now, as a receiver checks a signature's time against its own.
	clock := testkit.NewManualClockAt(time.Now().UTC())
	// The receivers of these tests listen on loopback, which an operator
	// opens as here.
	policy, err := fetchpolicy.Parse("127.0.0.0/8", "")
	require.NoError(t, err)
	e := webhooktest.NewEndpoints(t, clock, policy, testkit.NewResolver(), webhooks.Limits{MaxEndpoints: 100})
	return harness{
		uow: e.UoW, svc: e.Service, clock: clock, admin: e.Admin,
		handler: delivery.NewHandler(e.UoW, e.Service, &http.Client{Timeout: 10 * time.Second}, clock, nil),
	}
}

func (h harness) endpoint(t *testing.T, url string, events ...string) webhooks.WithSecret {
	t.Helper()
	created, err := ports.Query(t.Context(), h.uow, h.admin.WorkspaceID, func(ctx context.Context, tx ports.Tx) (webhooks.WithSecret, error) {
		return h.svc.Create(ctx, tx, h.admin, webhooks.CreateCommand{URL: url, EventTypes: events, Enabled: true})
	})
	require.NoError(t, err)
	return created
}

// endOperation writes a pending operation, then ends it as status in a
// transaction of its own, as a job's end does, and returns the
// deliveries that transaction wrote.
func (h harness) endOperation(t *testing.T, status model.OperationStatus) []model.OutboxEvent {
	t.Helper()
	ws := h.admin.WorkspaceID
	op := model.Operation{
		ID: uuid.Must(uuid.NewV7()), WorkspaceID: ws, Kind: model.OperationStoreVerify, Status: model.OperationPending,
		ResourceType: "store", ResourceID: uuid.New(), CreatedBy: h.admin.UserID, CreatedAt: h.clock.Now(), UpdatedAt: h.clock.Now(),
	}
	require.NoError(t, h.uow.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
		return tx.Operations().Create(ctx, op)
	}))
	require.NoError(t, h.uow.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
		if status == model.OperationSucceeded {
			op.Succeed(h.clock.Now())
		} else {
			op.Fail("the platform refused", h.clock.Now())
		}
		return jobs.SaveEnded(ctx, tx, op)
	}))
	return h.deliveries(t, op.ID)
}

// An operation's end writes one delivery per subscribed, enabled
// endpoint in its own transaction; each, delivered, verifies at a
// receiver written with the standardwebhooks npm package, and its retry
// carries the same webhook-id.
func TestAnOperationsEndReachesAStockReceiver(t *testing.T) {
	h := newHarness(t)
	// The receiver needs the secret, the endpoint the receiver's URL: the
	// endpoint is made first with a placeholder URL, then pointed at it.
	created := h.endpoint(t, "http://127.0.0.1:9/placeholder", model.WebhookOperationSucceeded)
	receiver := webhooktest.Start(t, created.Secret)
	url := receiver.URL
	_, err := h.svc.Update(t.Context(), h.admin, created.Endpoint.ID, webhooks.Patch{URL: &url})
	require.NoError(t, err)
	disabled := h.endpoint(t, receiver.URL+"/disabled", model.WebhookOperationSucceeded)
	off := false
	_, err = h.svc.Update(t.Context(), h.admin, disabled.Endpoint.ID, webhooks.Patch{Enabled: &off})
	require.NoError(t, err)
	h.endpoint(t, receiver.URL+"/failures", model.WebhookOperationFailed)

	deliveries := h.endOperation(t, model.OperationSucceeded)
	require.Len(t, deliveries, 1, "the one enabled endpoint subscribed to operation.succeeded")
	d := deliveries[0]
	require.Equal(t, model.WebhookDestination(created.Endpoint.ID), d.Destination)
	require.NotContains(t, string(d.Payload), created.Secret)

	msg := ports.MessageOf(d)
	require.NoError(t, h.handler.Handle(t.Context(), msg))
	v := receiver.Next(t)
	require.True(t, v.OK, "%+v", v)
	require.True(t, v.First)
	require.Equal(t, d.ID.String(), v.ID, "webhook-id is the delivery's id")

	// Delivered again (a redelivery after a lost ack): the same id, which
	// the receiver recognises.
	require.NoError(t, h.handler.Handle(t.Context(), msg))
	v = receiver.Next(t)
	require.True(t, v.OK, "%+v", v)
	require.False(t, v.First)

	// After a rotation the receiver still holding the old secret accepts
	// deliveries during the overlap.
	_, err = ports.Query(t.Context(), h.uow, h.admin.WorkspaceID, func(ctx context.Context, tx ports.Tx) (webhooks.WithSecret, error) {
		return h.svc.RotateSecret(ctx, tx, h.admin, created.Endpoint.ID)
	})
	require.NoError(t, err)
	next := h.endOperation(t, model.OperationSucceeded)
	require.Len(t, next, 1)
	require.NoError(t, h.handler.Handle(t.Context(), ports.MessageOf(next[0])))
	v = receiver.Next(t)
	require.True(t, v.OK && v.First, "%+v", v)

	require.Len(t, h.endOperation(t, model.OperationFailed), 1, "the endpoint of operation.failed")
}

// The receiver's answer decides what the worker does next.
func TestAnswersAreSortedForTheWorker(t *testing.T) {
	h := newHarness(t)
	var status atomic.Int32
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("webhook-signature") == "" || r.Header.Get("webhook-id") == "" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(int(status.Load()))
	}))
	t.Cleanup(srv.Close)
	e := h.endpoint(t, srv.URL+"/hook", model.WebhookOperationSucceeded)
	deliveries := h.endOperation(t, model.OperationSucceeded)
	require.Len(t, deliveries, 1)
	msg := ports.MessageOf(deliveries[0])

	status.Store(http.StatusNoContent)
	require.NoError(t, h.handler.Handle(t.Context(), msg))

	status.Store(http.StatusServiceUnavailable)
	err := h.handler.Handle(t.Context(), msg)
	require.True(t, platformerr.IsUpstream(err), "a 5xx is the receiver's transient failure: %v", err)

	status.Store(http.StatusTooManyRequests)
	err = h.handler.Handle(t.Context(), msg)
	wait, throttled := platformerr.ThrottledFor(err)
	require.True(t, throttled, "%v", err)
	require.Equal(t, 7*time.Second, wait)

	status.Store(http.StatusGone)
	err = h.handler.Handle(t.Context(), msg)
	require.Error(t, err)
	require.False(t, platformerr.IsUpstream(err), "a refusal is no outage")
	require.True(t, platformerr.IsRefused(err), "a refusal spends an attempt: %v", err)

	// Disabled, then deleted: nothing is sent, the delivery is done.
	before := calls.Load()
	off := false
	_, err = h.svc.Update(t.Context(), h.admin, e.Endpoint.ID, webhooks.Patch{Enabled: &off})
	require.NoError(t, err)
	disabled, _ := domain.WithJobReport(t.Context())
	require.NoError(t, h.handler.Handle(disabled, msg))
	require.True(t, domain.NoCallReported(disabled), "no call: nothing for the endpoint's breaker to learn")
	require.NoError(t, h.svc.Delete(t.Context(), h.admin, e.Endpoint.ID))
	deleted, _ := domain.WithJobReport(t.Context())
	require.NoError(t, h.handler.Handle(deleted, msg))
	require.True(t, domain.NoCallReported(deleted))
	require.Equal(t, before, calls.Load())

	// A receiver that does not answer is a transient failure too.
	srv.Close()
	h.endpoint(t, srv.URL+"/hook", model.WebhookOperationSucceeded)
	gone := h.endOperation(t, model.OperationSucceeded)
	require.Len(t, gone, 1)
	err = h.handler.Handle(t.Context(), ports.MessageOf(gone[0]))
	require.True(t, platformerr.IsUpstream(err), "%v", err)
	require.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err))
}

// A job the worker gives up on is announced to the endpoints of
// dead_letter.created in the transaction that dead-letters it; a
// delivery's own dead letter is not.
func TestADeadLetterIsAnnounced(t *testing.T) {
	h := newHarness(t)
	e := h.endpoint(t, "http://127.0.0.1:9/hook", model.WebhookDeadLetterCreated)
	ws := h.admin.WorkspaceID
	job, err := model.NewOutboxEvent(uuid.Must(uuid.NewV7()), ws, "store.credentials.verify", "store", uuid.New(), map[string]string{}, h.clock.Now())
	require.NoError(t, err)
	require.NoError(t, h.uow.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
		return tx.Outbox().Append(ctx, job)
	}))
	failures := jobs.NewFailures(h.uow, h.clock, nil)
	require.NoError(t, failures.GiveUp(t.Context(), ports.MessageOf(job), errors.New("gave up"), 3))

	announced := h.deliveries(t, job.ID)
	require.Len(t, announced, 1)
	require.Equal(t, model.WebhookDestination(e.Endpoint.ID), announced[0].Destination)
	var d model.WebhookDelivery
	require.NoError(t, json.Unmarshal(announced[0].Payload, &d))
	require.Equal(t, model.WebhookDeadLetterCreated, d.Event.Type)
	require.Equal(t, job.ID, d.Event.Data.EventID)
	require.Equal(t, "store.credentials.verify", d.Event.Data.EventType)

	// The announcement itself given up on: no announcement of it.
	require.NoError(t, failures.GiveUp(t.Context(), ports.MessageOf(announced[0]), errors.New("gave up"), 3))
	require.Empty(t, h.deliveries(t, announced[0].ID))
}

// deliveries are the webhook deliveries about the outbox event or
// operation id.
func (h harness) deliveries(t *testing.T, about uuid.UUID) []model.OutboxEvent {
	t.Helper()
	events, err := ports.Query(t.Context(), h.uow, h.admin.WorkspaceID, func(ctx context.Context, tx ports.Tx) ([]model.OutboxEvent, error) {
		return tx.Outbox().List(ctx, "", 1000)
	})
	require.NoError(t, err)
	var out []model.OutboxEvent
	for _, e := range events {
		if e.Type == model.EventWebhookDeliver && e.AggregateID == about {
			out = append(out, e)
		}
	}
	return out
}

// A message on the broker is trusted only as far as the outbox agrees:
// one forged by whoever can write to Redis or RabbitMQ, naming a
// victim's workspace and endpoint, never gets its own body signed with
// the endpoint's secret: a message that is not a delivery of the outbox,
// as written, sends nothing.
func TestAForgedMessageSendsNothingOfItsOwn(t *testing.T) {
	h := newHarness(t)
	bodies := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- string(b)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	victim := h.endpoint(t, srv.URL+"/hook", model.WebhookOperationSucceeded)
	attacker := model.WebhookEventBody{
		Type: model.WebhookOperationSucceeded, Timestamp: h.clock.Now(),
		Data: model.WebhookEventData{OperationID: uuid.New(), Kind: "attacker-chosen", Status: model.OperationSucceeded},
	}
	forged := func(id uuid.UUID, endpoint uuid.UUID) ports.Message {
		payload, err := json.Marshal(model.WebhookDelivery{EndpointID: endpoint, Event: attacker})
		require.NoError(t, err)
		return ports.Message{
			ID: id, Type: model.EventWebhookDeliver, WorkspaceID: h.admin.WorkspaceID, Payload: payload,
			Destination: model.WebhookDestination(endpoint), CreatedAt: h.clock.Now(),
		}
	}

	// No delivery of that id: nothing is sent.
	ctx, _ := domain.WithJobReport(t.Context())
	require.NoError(t, h.handler.Handle(ctx, forged(uuid.Must(uuid.NewV7()), victim.Endpoint.ID)))
	require.True(t, domain.NoCallReported(ctx))

	// The id of an event of another type (a job's): nothing is sent.
	job, err := model.NewOutboxEvent(uuid.Must(uuid.NewV7()), h.admin.WorkspaceID, "store.credentials.verify", "store", uuid.New(), map[string]string{}, h.clock.Now())
	require.NoError(t, err)
	require.NoError(t, h.uow.Transact(t.Context(), h.admin.WorkspaceID, func(ctx context.Context, tx ports.Tx) error {
		return tx.Outbox().Append(ctx, job)
	}))
	ctx, _ = domain.WithJobReport(t.Context())
	require.NoError(t, h.handler.Handle(ctx, forged(job.ID, victim.Endpoint.ID)))
	require.True(t, domain.NoCallReported(ctx))

	// A real delivery's id (a receiver sees it as webhook-id) with the
	// attacker's body: nothing is sent; the delivery itself sends its own.
	deliveries := h.endOperation(t, model.OperationSucceeded)
	require.Len(t, deliveries, 1)
	ctx, _ = domain.WithJobReport(t.Context())
	require.NoError(t, h.handler.Handle(ctx, forged(deliveries[0].ID, victim.Endpoint.ID)))
	require.True(t, domain.NoCallReported(ctx))
	require.Empty(t, bodies, "no forged message was sent")
	require.NoError(t, h.handler.Handle(t.Context(), ports.MessageOf(deliveries[0])))
	var stored model.WebhookDelivery
	require.NoError(t, json.Unmarshal(deliveries[0].Payload, &stored))
	want, err := json.Marshal(stored.Event)
	require.NoError(t, err)
	require.JSONEq(t, string(want), <-bodies, "the stored event")
	require.Empty(t, bodies, "nothing else was sent")
}

// An admin who fears the replaced secret leaked revokes it at once: the
// next delivery is signed with the new secret only, not for the rest of
// the overlap with both. Revoking again changes nothing.
func TestARevokedPreviousSecretSignsNothingMore(t *testing.T) {
	h := newHarness(t)
	type sent struct {
		header http.Header
		body   []byte
	}
	got := make(chan sent, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- sent{r.Header.Clone(), body}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	created := h.endpoint(t, srv.URL, model.WebhookOperationSucceeded)
	rotated, err := ports.Query(t.Context(), h.uow, h.admin.WorkspaceID, func(ctx context.Context, tx ports.Tx) (webhooks.WithSecret, error) {
		return h.svc.RotateSecret(ctx, tx, h.admin, created.Endpoint.ID)
	})
	require.NoError(t, err)
	deliver := func() sent {
		d := h.endOperation(t, model.OperationSucceeded)
		require.Len(t, d, 1)
		require.NoError(t, h.handler.Handle(t.Context(), ports.MessageOf(d[0])))
		return <-got
	}
	verifies := func(s sent, secret string) bool {
		wh, err := standardwebhooks.NewWebhook(secret)
		require.NoError(t, err)
		return wh.Verify(s.body, s.header) == nil
	}
	during := deliver()
	require.True(t, verifies(during, created.Secret), "during the overlap the replaced secret signs too")

	for range 2 {
		e, err := h.svc.RevokePreviousSecret(t.Context(), h.admin, created.Endpoint.ID)
		require.NoError(t, err)
		require.Nil(t, e.SealedPreviousSecret)
		require.Equal(t, 2, e.SecretVersion)
	}
	after := deliver()
	require.Len(t, strings.Fields(after.header.Get(webhooks.HeaderSignature)), 1, "the new secret's signature only")
	require.True(t, verifies(after, rotated.Secret))
	require.False(t, verifies(after, created.Secret))
}
