package app

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/opsconsole"
	"github.com/oncehq/once/adapters/opshttp"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/operator"
	"github.com/oncehq/once/ports"
)

// ConsoleModule puts the operator console on the ops listener, under
// opsconsole.Prefix, in every process: on when there is an operator
// (ONCE_OPERATORS, ONCE_OPERATORS_FILE or the legacy ONCE_OPERATOR_TOKEN).
var ConsoleModule = fx.Module("console",
	fx.Provide(
		operator.NewConsole,
		// The console cancels with the public API's use case.
		func(f *jobs.Failures) operator.Canceller { return f },
		fx.Annotate(newConsoleRoutes, fx.ResultTags(`group:"ops_routes,flatten"`)),
	),
)

// newConsoleRoutes are the console's routes, or, with no operator, one
// route that says the console is off (and a start-up line saying so).
func newConsoleRoutes(guard *opshttp.Guard, console *operator.Console, clock ports.Clock, log *slog.Logger) []OpsRoute {
	log = log.With("component", "console")
	if !guard.On() {
		log.Info("operator console off: set ONCE_OPERATORS to serve it on the ops listener")
		return []OpsRoute{{Pattern: opsconsole.Prefix, Handler: opsconsole.Disabled(), Access: opshttp.Open}}
	}
	log.Info("operator console on the ops listener", "path", opsconsole.Prefix)
	return opsconsole.Routes(console, guard, clock, log)
}
