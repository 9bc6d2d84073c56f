package httpapi

import (
	"net/http"
	"time"
)

// RequestObserver hears each finished request, for metrics: route is the
// pattern that matches ("POST /v1/stores", "GET /v1/operations/{id}"), so
// that ids in paths do not make a series each, or "unmatched".
type RequestObserver interface {
	ObserveRequest(route string, status int, elapsed time.Duration)
}

// observeRequests reports every request to obs (nothing when obs is nil).
func observeRequests(obs RequestObserver, mux *http.ServeMux, next http.Handler) http.Handler {
	if obs == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		_, route := mux.Handler(r)
		if route == "" {
			route = "unmatched"
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		obs.ObserveRequest(route, rec.status, time.Since(start))
	})
}
