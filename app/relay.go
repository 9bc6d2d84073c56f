package app

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/prometheus"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/ports"
)

// Relay settings: ONCE_RELAY is auto (the default: on with a real queue,
// off with the in-process one, whose Dispatcher is in the same process
// anyway), true or false.
const (
	RelayAuto = "auto"
	RelayOn   = "true"
	RelayOff  = "false"
)

// RelayEnabled reports whether this process's writes relay their own
// events (dispatch.Relay).
func (c Config) RelayEnabled() bool {
	switch c.Relay {
	case RelayOn:
		return true
	case RelayOff:
		return false
	}
	return c.Queue != QueueMemory
}

// relayModule runs the relay and routes every unit of work of the process
// through it, so the API's writes and the workers' follow-up events alike
// are written held and published after their commit. The decorator is at
// the root (not inside an fx.Module), so every use case gets it. The
// relay's lifecycle hook comes before the workers' and the API's, so it
// stops after them, when nothing more is handed to it.
func relayModule(enabled bool) fx.Option {
	if !enabled {
		return fx.Options()
	}
	return fx.Options(
		fx.Provide(newRelay),
		fx.Invoke(func(lc fx.Lifecycle, r *dispatch.Relay) { runInBackground(lc, r.Run) }),
		fx.Decorate(func(uow ports.UnitOfWork, r *dispatch.Relay) ports.UnitOfWork { return r.UnitOfWork(uow) }),
	)
}

type relayIn struct {
	fx.In
	Marks     ports.OutboxRelayMarks
	Publisher ports.Publisher
	Signal    ports.DispatchSignal
	Clock     ports.Clock
	Log       *slog.Logger
	Metrics   *prometheus.Metrics
}

// newRelay publishes with the Dispatchers' batches and breaker (publish).
func newRelay(cfg RelayConfig, publish DispatchConfig, process ProcessConfig, in relayIn) (*dispatch.Relay, error) {
	return dispatch.NewRelay(dispatch.RelayConfig{
		Holder:          process.Owner() + "/relay",
		Hold:            cfg.RelayHold,
		Batch:           publish.DispatchBatch,
		Concurrency:     publish.DispatchConcurrency,
		BreakerFailures: publish.DispatchBreakerFailures,
		BreakerOpen:     publish.DispatchBreakerOpen,
	}, dispatch.RelayDeps{
		Marks: in.Marks, Publisher: in.Publisher, Signal: in.Signal, Clock: in.Clock,
		Logger: in.Log, Observer: in.Metrics, Hooks: relayHooks(),
	})
}
