package app

import (
	"log/slog"
	"net/http"
	"time"

	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/netguard"
	"github.com/oncehq/once/domain/fetchpolicy"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/webhooks"
	"github.com/oncehq/once/domain/webhooks/delivery"
	"github.com/oncehq/once/ports"
)

// webhookTimeout bounds one delivery, connect to answer: a receiver is
// expected to acknowledge at once and do its work later.
const webhookTimeout = 15 * time.Second

// ownEventTypes are once's own jobs: work only its workers can do,
// whatever the queue, since a webhook delivery needs the sealed signing
// secrets and the guarded client. With ONCE_QUEUE=bullmq they go to Redis
// Streams for once's workers, not to the Node.js ones (bullmqModule).
var ownEventTypes = []string{model.EventWebhookDeliver}

// webhookDelivery provides the worker's handler of webhook.deliver among
// the kinds' handlers (newHandlers maps it to its event type).
var webhookDelivery = fx.Provide(
	fx.Annotate(newWebhookDelivery, fx.As(new(jobHandler)), fx.ResultTags(`group:"job_handlers"`)),
)

// newWebhookDelivery is the handler, calling out through the guarded
// client: every address it connects to passes the fetch policy, whatever
// the URL's host resolved to when it was saved. A redirect is not
// followed (it is the receiver's answer, a refusal): the target was never
// checked as an endpoint.
func newWebhookDelivery(uow ports.UnitOfWork, endpoints *webhooks.Service, policy fetchpolicy.Policy, clock ports.Clock, log *slog.Logger) *delivery.Handler {
	client := netguard.NewHTTPClient(policy, webhookTimeout)
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return delivery.NewHandler(uow, endpoints, client, clock, log)
}
