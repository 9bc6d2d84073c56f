package httpapi

import (
	"net/http"
	"strings"
	"time"
)

// RequestObserver hears each finished request, for metrics: route is the
// path pattern that matches ("/v1/stores", "/v1/operations/{id}"), so
// that ids in paths do not make a series each, or "unmatched"; method is
// the request's (a standard one, or "other": a client's made-up method
// must not make a series either).
type RequestObserver interface {
	ObserveRequest(method, route string, status int, elapsed time.Duration)
}

// observeRequests reports every request to obs (nothing when obs is nil).
func observeRequests(obs RequestObserver, mux *http.ServeMux, next http.Handler) http.Handler {
	if obs == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		_, pattern := mux.Handler(r)
		route := "unmatched"
		if pattern != "" {
			// A pattern is "[METHOD ][HOST]/PATH"; ours name no host.
			_, route, _ = strings.Cut(pattern, " ")
			if route == "" {
				route = pattern
			}
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		obs.ObserveRequest(methodLabel(r.Method), route, rec.status, time.Since(start))
	})
}

// methodLabel is method when it is a standard one, else "other".
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return method
	}
	return "other"
}
