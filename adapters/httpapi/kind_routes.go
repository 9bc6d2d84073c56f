package httpapi

import "github.com/danielgtaylor/huma/v2"

// kindRoutes register the routes of the kinds of task that own a table
// (start, read, list); each kind's file adds its own with
// registerKindRoutes, so Register names no kind.
var kindRoutes []func(*handlers, huma.API)

// registerKindRoutes adds a kind's routes to Register. It returns true, so
// a kind's file registers from a package-level declaration.
func registerKindRoutes(register func(*handlers, huma.API)) bool {
	kindRoutes = append(kindRoutes, register)
	return true
}

// taskService is the use case of type S among the kinds'
// (Deps.TaskServices), or S's zero value when it is not there, as when the
// spec is generated with zero Deps. The application provides every kind's
// use case (app's check of the kinds); the acceptance tests call every
// start route.
func taskService[S any](h *handlers) S {
	for _, svc := range h.deps.TaskServices {
		if s, ok := svc.(S); ok {
			return s
		}
	}
	var none S
	return none
}
