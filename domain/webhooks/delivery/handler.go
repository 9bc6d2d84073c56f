// Package delivery is the worker side of webhooks: the handler of
// webhook.deliver, which POSTs one event to one endpoint, signed per the
// Standard Webhooks specification.
package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/domain/webhooks"
	"github.com/oncehq/once/ports"
)

// RetryFor is how long a delivery is retried after its commit: a receiver
// down for a weekend still gets every event once it is back.
const RetryFor = 72 * time.Hour

// maxAnswerBytes bounds what is read of a receiver's answer (read only
// so the connection can be reused; its content is not used).
const maxAnswerBytes = 64 << 10

// Handler delivers webhook.deliver events. Its client must refuse
// non-public addresses at connect time (adapters/netguard), since the
// URL's host may resolve elsewhere than when it was checked.
type Handler struct {
	uow       ports.UnitOfWork
	endpoints *webhooks.Service
	client    *http.Client
	clock     ports.Clock
	log       *slog.Logger
}

var _ ports.MessageHandler = (*Handler)(nil)

// NewHandler builds the handler; log may be nil.
func NewHandler(uow ports.UnitOfWork, endpoints *webhooks.Service, client *http.Client, clock ports.Clock, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{uow: uow, endpoints: endpoints, client: client, clock: clock, log: log.With("handler", model.EventWebhookDeliver)}
}

// Event is the event type the handler runs.
func (h *Handler) Event() string { return model.EventWebhookDeliver }

// Handle delivers one event to its endpoint, with webhook-id = the
// message's id, the same on every retry. It sends only the delivery the
// outbox holds under that id, as written (stored): a forged message, an
// endpoint deleted or disabled since, gets nothing. A 2xx answer is done. A transport failure, a
// timeout, a 408 or a 5xx is the receiver's transient failure
// (platformerr.Upstream: the endpoint's breaker counts it, the delivery
// spends no attempt and waits longer each time, until RetryFor); a 429 is
// a throttle (its Retry-After paces the endpoint); any other answer is a
// refusal (platformerr.Refused), retried with backoff a few times (the
// worker's attempts, one spent per refusal), then dead-lettered, for an
// admin to re-drive.
func (h *Handler) Handle(ctx context.Context, msg ports.Message) error {
	sent, err := jobs.Decode(msg, model.EventWebhookDeliver, func(d model.WebhookDelivery) bool {
		return d.EndpointID != uuid.Nil && d.Event.Type != ""
	})
	if err != nil {
		return err
	}
	log := domain.LogWithin(ctx, h.log.With("message", msg.ID, "workspace", msg.WorkspaceID, "endpoint", sent.EndpointID))
	d, e, err := h.stored(ctx, msg)
	if domain.IsCode(err, domain.CodeValidation) {
		log.Warn("message is no webhook delivery of the outbox (forged, deleted by retention, or lost with its commit in a failover): dropped", "error", domain.SanitizeError(err))
		domain.ReportNoCall(ctx)
		return nil
	}
	if domain.IsCode(err, domain.CodeNotFound) {
		log.Info("webhook endpoint deleted, delivery dropped")
		domain.ReportNoCall(ctx)
		return nil
	}
	if err != nil {
		return err
	}
	if !e.Enabled {
		log.Info("webhook endpoint disabled, delivery dropped")
		domain.ReportNoCall(ctx)
		return nil
	}
	now := h.clock.Now()
	secrets, err := h.endpoints.SigningSecrets(e, now)
	if err != nil {
		log.Error("webhook secret cannot be opened", "error", domain.SanitizeError(err))
		return jobs.Retry(err)
	}
	body, err := json.Marshal(d.Event)
	if err != nil {
		return domain.Wrap(domain.CodeInternal, err, "webhook body cannot be encoded")
	}
	headers, err := webhooks.SignatureHeaders(msg.ID.String(), now, body, secrets)
	if err != nil {
		return jobs.Retry(err)
	}
	return h.post(ctx, log, e.URL, headers, body)
}

// stored is the delivery msg stands for, as the outbox holds it
// (jobs.Stored: the event of its id, type and payload in its workspace),
// and its endpoint. Whoever can write to the broker could otherwise have a
// victim endpoint's secret sign a body of their choosing.
// domain.CodeValidation when the delivery is not there, domain.CodeNotFound
// when its endpoint is not.
func (h *Handler) stored(ctx context.Context, msg ports.Message) (model.WebhookDelivery, model.WebhookEndpoint, error) {
	type found struct {
		d model.WebhookDelivery
		e model.WebhookEndpoint
	}
	f, err := ports.Query(ctx, h.uow, msg.WorkspaceID, func(ctx context.Context, tx ports.Tx) (found, error) {
		event, err := jobs.Stored(ctx, tx, msg)
		if domain.IsCode(err, domain.CodeNotFound) {
			return found{}, domain.Wrap(domain.CodeValidation, err, "message is no webhook delivery of its workspace's outbox")
		}
		if err != nil {
			return found{}, err
		}
		var d model.WebhookDelivery
		if err := json.Unmarshal(event.Payload, &d); err != nil {
			return found{}, domain.Wrap(domain.CodeValidation, err, "stored webhook delivery cannot be decoded")
		}
		e, err := ports.Repository[ports.WebhookEndpointRepository](tx).Get(ctx, d.EndpointID)
		return found{d: d, e: e}, err
	})
	return f.d, f.e, err
}

// post sends the delivery and sorts the answer (Handle).
func (h *Handler) post(ctx context.Context, log *slog.Logger, url string, headers http.Header, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		// The URL was checked when it was saved; one that no longer parses
		// will not on a retry either.
		return domain.Wrap(domain.CodeValidation, err, "webhook endpoint URL cannot be requested")
	}
	req.Header = headers
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "once-webhooks/1")
	res, err := h.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err() // our own stop
		}
		// The error names the URL, which may carry a token: logged and
		// kept sanitized only.
		log.Warn("webhook receiver unreachable, delivery will be retried", "error", domain.SanitizeError(err))
		return platformerr.Upstream(domain.Errorf(domain.CodeUnavailable, "webhook receiver unreachable"))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxAnswerBytes))
	_ = res.Body.Close()
	switch status := res.StatusCode; {
	case status >= 200 && status < 300:
		log.Info("webhook delivered", "status", status)
		return nil
	case status == http.StatusTooManyRequests:
		log.Warn("webhook receiver throttles, delivery will be retried")
		return &platformerr.Throttled{RetryAfter: retryAfter(res.Header), Cause: fmt.Errorf("webhook receiver answered %d", status)}
	case status >= 500 || status == http.StatusRequestTimeout:
		log.Warn("webhook receiver failed, delivery will be retried", "status", status)
		return platformerr.Upstream(domain.Errorf(domain.CodeUnavailable, "webhook receiver answered %d", status))
	default:
		// Not an outage, which would be waited out for RetryFor, POSTed
		// again and again: the receiver answered, and only its owner can
		// change that answer.
		log.Warn("webhook receiver refused the delivery", "status", status)
		return platformerr.Refused(fmt.Errorf("webhook receiver refused the delivery with %d", status))
	}
}

// retryAfter is a Retry-After in seconds (zero: absent or another form).
func retryAfter(h http.Header) time.Duration {
	secs, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || secs < 0 {
		return 0
	}
	return time.Duration(secs) * time.Second
}
