package httpapi

import (
	"net/http"

	"github.com/oncehq/once/domain"
)

// traceContext carries the W3C traceparent of the request into the context,
// from where the use cases copy it onto the outbox events they write, so the
// worker's span can join the request's trace.
func traceContext(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tp := r.Header.Get("traceparent"); tp != "" {
			r = r.WithContext(domain.WithTraceparent(r.Context(), tp))
		}
		next.ServeHTTP(w, r)
	})
}
