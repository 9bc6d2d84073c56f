package app

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/opsconsole"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/operator"
	"github.com/oncehq/once/ports"
)

// ConsoleModule puts the operator console on the ops listener, under
// opsconsole.Prefix, in every process: on when ONCE_OPERATOR_TOKEN is set.
var ConsoleModule = fx.Module("console",
	fx.Provide(
		operator.NewConsole,
		// The console cancels with the public API's use case.
		func(f *jobs.Failures) operator.Canceller { return f },
		fx.Annotate(newConsoleRoute, fx.ResultTags(`group:"ops_routes"`)),
	),
)

// newConsoleRoute is the console, or, with no operator token, a route that
// says the console is off (and a start-up line saying so).
func newConsoleRoute(secrets SecretsConfig, console *operator.Console, clock ports.Clock, log *slog.Logger) OpsRoute {
	log = log.With("component", "console")
	if secrets.OperatorToken == "" {
		log.Info("operator console off: set ONCE_OPERATOR_TOKEN to serve it on the ops listener")
		return OpsRoute{Pattern: opsconsole.Prefix, Handler: opsconsole.Disabled()}
	}
	log.Info("operator console on the ops listener", "path", opsconsole.Prefix)
	return OpsRoute{Pattern: opsconsole.Prefix, Handler: opsconsole.New(console, secrets.OperatorToken, clock, log)}
}
