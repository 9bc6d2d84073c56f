// Package opshttp is who may do what on the ops listener (ONCE_OPS_ADDR):
// every route there declares itself open (metrics, health, readiness:
// Prometheus and probes carry no credential) or the operator's (anything
// that changes behaviour or shows internals), and one mux applies the
// operator credential to the latter and refuses a browser's cross-site
// changes to all. A route cannot forget to ask: the mux refuses one that
// declares neither.
package opshttp

import (
	"fmt"
	"net/http"
)

// Access is who may call a route.
type Access int

const (
	// Undeclared is a route that said nothing; NewMux refuses it.
	Undeclared Access = iota
	// Open routes answer anyone who reaches the listener: the probes and
	// Prometheus.
	Open
	// Operator routes answer the operator credential only (Guard).
	Operator
)

func (a Access) String() string {
	switch a {
	case Open:
		return "open"
	case Operator:
		return "operator"
	}
	return "undeclared"
}

// Route is one handler served on the ops listener, never on the public
// API.
type Route struct {
	// Pattern is an http.ServeMux pattern, such as "GET /metrics" or
	// "/console/".
	Pattern string
	Handler http.Handler
	// Access says who may call it; it must be Open or Operator.
	Access Access
}

// NewMux serves routes: an Operator route behind guard, and every route
// behind the refusal of cross-site changes.
func NewMux(routes []Route, guard *Guard) (http.Handler, error) {
	mux := http.NewServeMux()
	for _, r := range routes {
		switch r.Access {
		case Open:
			mux.Handle(r.Pattern, r.Handler)
		case Operator:
			mux.Handle(r.Pattern, guard.Require(r.Handler))
		default:
			return nil, fmt.Errorf("ops route %q declares no access: mark it opshttp.Open or opshttp.Operator", r.Pattern)
		}
	}
	return refuseCrossSite(mux), nil
}
