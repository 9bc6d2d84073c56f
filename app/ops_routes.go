package app

import "github.com/oncehq/once/adapters/opshttp"

// OpsRoute is one handler served on the ops listener (ONCE_OPS_ADDR), never
// on the public API: metrics, health, the operator console. Modules add
// routes by providing an OpsRoute in the "ops_routes" value group:
//
//	fx.Provide(fx.Annotate(newConsoleRoute, fx.ResultTags(`group:"ops_routes"`)))
//
// Each declares its Access: opshttp.Open for what Prometheus and the
// probes call, opshttp.Operator for anything that changes behaviour or
// shows internals; the ops mux refuses a route that declares neither.
type OpsRoute = opshttp.Route
