package opshttp

import (
	"net/http"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/domain"
)

// refuseCrossSite answers 403 to a browser's request that would change
// something (any method but GET, HEAD, OPTIONS) from another origin: its
// Sec-Fetch-Site says cross-site or same-site, or, without it, its Origin
// names another host than the listener's. A page elsewhere cannot make an
// operator's browser act with the console's session, nor a browser on
// the host reach the listener's actions at 127.0.0.1. A request with
// neither header (curl, a script with the bearer token) is no browser's
// and passes to the credential check.
func refuseCrossSite(next http.Handler) http.Handler {
	p := http.NewCrossOriginProtection()
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.WriteProblem(w, r, domain.Errorf(domain.CodeForbidden, "a cross-origin request may not change anything on the ops listener"))
	}))
	return p.Handler(next)
}
