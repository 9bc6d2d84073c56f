package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/uptrace/bun"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/opshttp"
	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/redisconn"
	"github.com/oncehq/once/adapters/redisstates"
	"github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/domain/webhooks/delivery"
	"github.com/oncehq/once/ports"
)

// destinationGateIn is what a Gate's records may be kept in: the
// deployment's configuration, and its PostgreSQL (DB, absent on the
// embedded store).
type destinationGateIn struct {
	fx.In
	Lifecycle fx.Lifecycle
	Database  DatabaseConfig
	Queue     QueueConfig
	DB        *bun.DB `optional:"true"`
}

// newDestinationGate is the pace and circuit breaker per destination of
// the worker, with the platforms' published quotas as its start, no
// destination holding more than half of the worker's slots.
func newDestinationGate(cfg WorkerConfig, clock ports.Clock, in destinationGateIn) (*destinations.Gate, error) {
	states, err := destinationStates(in)
	if err != nil {
		return nil, err
	}
	return destinations.NewGate(destinations.DefaultConfig().WithinSlots(cfg.WorkConcurrency), clock, states), nil
}

// destinationStatesDialTimeout bounds connecting to the Redis the
// destinations' records are kept in; each read or write is bounded by
// destinations.Config.StateTimeout besides.
const destinationStatesDialTimeout = time.Second

// destinationStates is where the fleet's workers keep each destination's
// pace, breaker and pause, so that they obey one state between them. It
// uses what the deployment already has:
//
//   - this process's memory on the embedded store: there is one process,
//     so nothing to share, and its state goes with it as the embedded
//     queue's does;
//   - Redis when the jobs go through it (ONCE_QUEUE redis or bullmq):
//     every worker already depends on it, and a destination with a rate
//     writes a record per call, which Redis answers in well under a
//     millisecond and which so stays off the database the jobs' own
//     transactions wait for;
//   - PostgreSQL otherwise (RabbitMQ, or the in-process queue beside
//     PostgreSQL): every worker reaches it, and a call costs it a short
//     statement at its start and one at its end at most
//     (destinations.Gate says when).
//
// All three survive nothing less than what the deployment's jobs do: a
// worker's restart loses no pause, no open breaker, no learnt rate.
func destinationStates(in destinationGateIn) (ports.DestinationStates, error) {
	switch {
	case in.Database.Embedded() || in.DB == nil:
		return memory.NewDestinationStates(), nil
	case in.Queue.Queue == QueueRedis || in.Queue.Queue == QueueBullMQ:
		client, _, err := redisconn.NewClient(redisconn.Config{URL: in.Queue.RedisURL, DialTimeout: destinationStatesDialTimeout, FollowContext: true})
		if err != nil {
			return nil, fmt.Errorf("ONCE_REDIS_URL (the destinations' state): %w", err)
		}
		in.Lifecycle.Append(fx.StopHook(func(context.Context) error { return client.Close() }))
		// Under the queue's prefix, as the deployment's streams are: two
		// deployments sharing a Redis share no destination's state.
		return redisstates.New(client, in.Queue.QueuePrefix+"destination:"), nil
	default:
		return postgres.NewDestinationStates(in.DB), nil
	}
}

// workerGate adapts a destinations.Gate to the worker's queue.Destinations.
type workerGate struct{ gate *destinations.Gate }

func (w workerGate) Try(destination string) (func(queue.CallResult), queue.Refusal) {
	permit, wait := w.gate.Try(model.ParseDestination(destination))
	if permit == nil {
		return nil, queue.Refusal{Until: wait.Until, Why: string(wait.Why), Of: wait.Of.String(), Every: wait.Every}
	}
	return func(r queue.CallResult) { permit.Done(outcomeOf(r)) }, queue.Refusal{}
}

// outcomeOf is what the gate learns from how a job's call went.
func outcomeOf(r queue.CallResult) destinations.Outcome {
	switch {
	case r.Throttled && r.OfApplication:
		return destinations.Outcome{Kind: destinations.Throttled, RetryAfter: r.RetryAfter, Scope: platformerr.ScopeApplication}
	case r.Throttled:
		return destinations.Outcome{Kind: destinations.Throttled, RetryAfter: r.RetryAfter}
	case r.Failed:
		return destinations.Outcome{Kind: destinations.Failed}
	case r.Abandoned:
		return destinations.Outcome{Kind: destinations.Abandoned}
	}
	return destinations.Outcome{Kind: destinations.Succeeded}
}

// retryDeadlines are the kinds' own deadlines for transient failures, by
// event type; the others take the worker's default.
func retryDeadlines() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, k := range kinds.All {
		if k.RetryFor > 0 {
			out[k.EventType] = k.RetryFor
		}
	}
	out[model.EventWebhookDeliver] = delivery.RetryFor
	return out
}

// destinationRoutes are the worker's destinations on its ops listener:
// GET /destinations lists what its gate holds (JSON: the fleet's state as
// this worker last read it, its own calls in flight); POST
// /destinations/pause?destination=shopify/my-shop&for=10m stops its calls
// (without for: until resumed), /destinations/resume lets them go again,
// /destinations/close-breaker closes its breaker by hand. The actions
// write the fleet's state (destinationStates): call any one worker, and
// every worker obeys within a second. A store that cannot be written
// answers 503, and nothing changed. All are the operator's: the actions
// stop or release a platform's calls for every workspace, and the list
// names tenants' shops.
func destinationRoutes(gate *destinations.Gate, clock ports.Clock) []OpsRoute {
	act := func(do func(d model.Destination, r *http.Request) error) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			d := model.ParseDestination(r.URL.Query().Get("destination"))
			if d.IsZero() {
				http.Error(w, "destination is required, such as ?destination=shopify/my-shop", http.StatusBadRequest)
				return
			}
			if err := do(d, r); err != nil {
				status := http.StatusServiceUnavailable
				if errors.As(err, new(badRequest)) {
					status = http.StatusBadRequest
				}
				http.Error(w, err.Error(), status)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		})
	}
	return []OpsRoute{
		{Pattern: "GET /destinations", Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(gate.Snapshot())
		}), Access: opshttp.Operator},
		{Pattern: "POST /destinations/pause", Handler: act(func(d model.Destination, r *http.Request) error {
			var until time.Time
			if f := r.URL.Query().Get("for"); f != "" {
				span, err := time.ParseDuration(f)
				if err != nil || span <= 0 {
					return badRequest("for must be a positive duration such as 10m")
				}
				until = clock.Now().Add(span)
			}
			return gate.Pause(r.Context(), d, until)
		}), Access: opshttp.Operator},
		{Pattern: "POST /destinations/resume", Handler: act(func(d model.Destination, r *http.Request) error { return gate.Resume(r.Context(), d) }), Access: opshttp.Operator},
		{Pattern: "POST /destinations/close-breaker", Handler: act(func(d model.Destination, r *http.Request) error { return gate.CloseBreaker(r.Context(), d) }), Access: opshttp.Operator},
	}
}

// badRequest is an operator's mistake in a destination route's request.
type badRequest string

func (e badRequest) Error() string { return string(e) }
