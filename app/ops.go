package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/opshttp"
	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/adapters/prometheus"
	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/ports"
	schema "github.com/oncehq/once/sql"
)

// The ops listener's default address per command, when ONCE_OPS_ADDR is
// unset: one port each, so that serve, dispatch and work run side by side
// on one host without a setting.
const (
	OpsAddrServe    = "127.0.0.1:9180"
	OpsAddrDispatch = "127.0.0.1:9181"
	OpsAddrWork     = "127.0.0.1:9182"
)

// WithOpsAddr fills in the command's default ops address when
// ONCE_OPS_ADDR is unset.
func (c Config) WithOpsAddr(def string) Config {
	if c.OpsAddr == "" {
		c.OpsAddr = def
	}
	return c
}

// OpsRoutesModule provides the routes every process serves on its ops
// listener: /metrics, /healthz and /readyz, and the mux of every route in
// the "ops_routes" group, the operator's behind the operator credential.
var OpsRoutesModule = fx.Module("ops_routes",
	fx.Provide(
		newOperatorGuard,
		fx.Annotate(metricsRoute, fx.ResultTags(`group:"ops_routes"`)),
		fx.Annotate(healthRoute, fx.ResultTags(`group:"ops_routes"`)),
		fx.Annotate(newReadiness, fx.ResultTags(`group:"ops_routes"`)),
		fx.Annotate(pprofRoute, fx.ResultTags(`group:"ops_routes"`)),
		fx.Annotate(NewOpsMux, fx.ParamTags(`group:"ops_routes"`)),
	),
)

// OpsMux serves the ops routes.
type OpsMux struct{ http.Handler }

// NewOpsMux routes each OpsRoute, an operator's behind guard; it refuses a
// route that declares no access.
func NewOpsMux(routes []OpsRoute, guard *opshttp.Guard) (*OpsMux, error) {
	mux, err := opshttp.NewMux(routes, guard)
	if err != nil {
		return nil, err
	}
	return &OpsMux{mux}, nil
}

// newOperatorGuard checks the operators' tokens (ONCE_OPERATORS,
// ONCE_OPERATORS_FILE, the legacy ONCE_OPERATOR_TOKEN) and the console's
// sessions on the ops listener's operator routes; with no operator they
// are refused.
func newOperatorGuard(ops OpsConfig, secrets SecretsConfig, sessions ports.OperatorSessions, clock ports.Clock, log *slog.Logger) (*opshttp.Guard, error) {
	operators, err := ops.OperatorsOf(secrets.OperatorToken)
	if err != nil {
		return nil, err
	}
	if secrets.OperatorToken != "" {
		log.Warn("ONCE_OPERATOR_TOKEN is one token shared by every operator, named "+opshttp.LegacyOperator+" in the audit log: give each operator their own in ONCE_OPERATORS (docs/operating.md#operators)",
			"component", "ops")
	}
	return opshttp.NewGuard(operators, sessions, clock), nil
}

// Ops is the ops listener on cfg.OpsAddr, over TLS when
// ONCE_OPS_TLS_CERT_FILE is set; nothing when it is empty (an application
// embedded in a test, which serves the OpsMux itself).
func Ops(cfg OpsConfig) fx.Option {
	if cfg.OpsAddr == "" {
		return fx.Options()
	}
	return fx.Module("ops",
		fx.Invoke(func(lc fx.Lifecycle, mux *OpsMux, log *slog.Logger) error {
			tlsConfig, err := cfg.TLSConfig()
			if err != nil {
				return err
			}
			srv := &http.Server{
				TLSConfig:         tlsConfig,
				Handler:           mux,
				ReadHeaderTimeout: 10 * time.Second,
				ReadTimeout:       30 * time.Second,
				WriteTimeout:      30 * time.Second,
				IdleTimeout:       2 * time.Minute,
			}
			serveInBackground(lc, srv, cfg.OpsAddr, "ONCE_OPS_ADDR", log.With("component", "ops"), "ops server", nil)
			return nil
		}),
	)
}

func metricsRoute(m *prometheus.Metrics) OpsRoute {
	return OpsRoute{Pattern: "GET /metrics", Handler: m.Handler(), Access: opshttp.Open}
}

// mutexSampling is one in how many lock contentions the mutex profile
// records while the profiler is served.
const mutexSampling = 5

// pprofRoute serves the Go profiler under /debug/pprof/ to the operator
// when ONCE_OPS_PPROF is on, and 404 when it is off: a CPU profile costs
// the process while it runs, so it is never there by accident, and a
// profile shows the process's command line and memory.
func pprofRoute(cfg OpsConfig) OpsRoute {
	if cfg.OpsPprof {
		// /debug/pprof/mutex says where goroutines wait for a lock (a
		// worker's slots, a pool): one contention in mutexSampling is
		// recorded, a cost only the profiled process pays.
		runtime.SetMutexProfileFraction(mutexSampling)
	}
	if !cfg.OpsPprof {
		return OpsRoute{Pattern: "/debug/pprof/", Handler: http.NotFoundHandler(), Access: opshttp.Operator}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return OpsRoute{Pattern: "/debug/pprof/", Handler: mux, Access: opshttp.Operator}
}

// healthRoute says the process is alive: it answers at all.
func healthRoute() OpsRoute {
	return OpsRoute{Pattern: "GET /healthz", Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	}), Access: opshttp.Open}
}

// readinessTimeout bounds each check of /readyz.
const readinessTimeout = 3 * time.Second

// check is one thing /readyz asks.
type check struct {
	name string
	run  func(context.Context) error
}

type readinessIn struct {
	fx.In
	Process    ProcessConfig
	Queue      QueueConfig
	Shutdown   *Shutdown            `optional:"true"`
	DB         *bun.DB              `optional:"true"`
	Worker     *queue.Worker        `optional:"true"`
	Dispatcher *dispatch.Dispatcher `optional:"true"`
}

// newReadiness answers /readyz: 200 when the database answers, every
// migration this binary embeds is applied, the broker (for a process that
// runs a Dispatcher or workers) answers and is what the configuration says,
// in a process with a Dispatcher it is publishing (its breaker is not open
// over a broker found unreachable or misconfigured: a queue declared with
// other arguments, a Redis Cluster node answering MOVED) and, in a process
// with workers, every subscription is consuming (not while they are still
// being made at start-up), and the process is not stopping (from SIGTERM on
// it answers 503, so a balancer takes it out while it drains); otherwise
// 503. The body names
// every check and, for a failed one, why, sanitized: it is for operators'
// probes and dashboards, not for the secrets in a connection string.
func newReadiness(in readinessIn) OpsRoute {
	var checks []check
	if sd := in.Shutdown; sd != nil {
		checks = append(checks, check{"shutdown", func(context.Context) error {
			if sd.Draining() {
				return domain.Errorf(domain.CodeUnavailable, "stopping")
			}
			return nil
		}})
	}
	if in.DB != nil {
		db := in.DB
		checks = append(checks,
			check{"database", db.PingContext},
			check{"migrations", func(ctx context.Context) error {
				pending, err := postgres.PendingMigrations(ctx, db, schema.FS)
				if err != nil {
					return err
				}
				if len(pending) > 0 {
					return domain.Errorf(domain.CodeUnavailable, "not applied: %s (run once migrate)", strings.Join(pending, ", "))
				}
				return nil
			}})
	}
	if in.Process.Dispatcher || in.Process.Worker {
		checks = append(checks, check{"broker", func(ctx context.Context) error { return CheckBroker(ctx, in.Process, in.Queue) }})
	}
	if d := in.Dispatcher; d != nil {
		checks = append(checks, check{"publishing", func(context.Context) error { return d.Paused() }})
	}
	if w := in.Worker; w != nil {
		checks = append(checks, check{"subscriptions", func(context.Context) error {
			if !w.Consuming() {
				return domain.Errorf(domain.CodeUnavailable, "the workers are not consuming yet")
			}
			return nil
		}})
	}
	return OpsRoute{Pattern: "GET /readyz", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		results := runChecks(r.Context(), checks)
		status, code := "ready", http.StatusOK
		for _, v := range results {
			if v != "ok" {
				status, code = "not ready", http.StatusServiceUnavailable
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]any{"status": status, "checks": results})
	}), Access: opshttp.Open}
}

// runChecks runs the checks side by side, each within readinessTimeout,
// and says "ok" or why not for each.
func runChecks(ctx context.Context, checks []check) map[string]string {
	results := make(map[string]string, len(checks))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range checks {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, readinessTimeout)
			defer cancel()
			res := "ok"
			if err := c.run(ctx); err != nil {
				res = domain.SanitizeError(err)
			}
			mu.Lock()
			results[c.name] = res
			mu.Unlock()
		})
	}
	wg.Wait()
	return results
}
