package app

import "net/http"

// OpsRoute is one handler served on the ops listener (ONCE_OPS_ADDR), never
// on the public API: metrics, health, the operator console. Modules add
// routes by providing an OpsRoute in the "ops_routes" value group:
//
//	fx.Provide(fx.Annotate(newConsoleRoute, fx.ResultTags(`group:"ops_routes"`)))
type OpsRoute struct {
	// Pattern is an http.ServeMux pattern, such as "GET /metrics" or
	// "/console/".
	Pattern string
	Handler http.Handler
}
