package httpapi

import (
	"net/http"

	"github.com/oncehq/once/domain"
)

// routerProblems answers what the mux itself refuses (no route: 404, a
// route without this method: 405) as problem+json like every other error,
// keeping the mux's Allow header.
func routerProblems(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		// The mux's own answer decides the status (404 or 405, or a
		// redirect to the canonical path) and the Allow header; its text
		// body is dropped.
		capture := &statusOnly{header: w.Header()}
		mux.ServeHTTP(capture, r)
		if capture.status != http.StatusNotFound && capture.status != http.StatusMethodNotAllowed {
			w.WriteHeader(capture.status)
			return
		}
		if capture.status == http.StatusNotFound {
			WriteProblem(w, r, domain.Errorf(domain.CodeNotFound, "no route for %s", r.URL.Path))
		} else {
			WriteProblem(w, r, domain.Errorf(domain.CodeMethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path))
		}
	})
}

// statusOnly records the status the mux chose and discards its body.
type statusOnly struct {
	header http.Header
	status int
}

func (s *statusOnly) Header() http.Header { return s.header }
func (s *statusOnly) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return len(b), nil
}
func (s *statusOnly) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
}
