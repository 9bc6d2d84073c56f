package opsconsole

import (
	"net/http"

	"github.com/oncehq/once/adapters/opshttp"
	"github.com/oncehq/once/domain"
)

// revokeSessions ends every console session of the operator the path
// names, in every process: a lost laptop, an operator leaving. Their
// token still works until it is removed from ONCE_OPERATORS (and the
// processes restarted); removing it refuses their sessions too.
func (h *handler) revokeSessions(r *http.Request) (any, []any, error) {
	name := r.PathValue("name")
	audit := []any{"action", "revoke_sessions", "target", name}
	if !opshttp.ValidName(name) {
		return nil, audit, domain.Errorf(domain.CodeValidation, "%q is no operator's name", name)
	}
	n, err := h.guard.RevokeSessions(r.Context(), name)
	if err != nil {
		return nil, audit, domain.Wrap(domain.CodeUnavailable, err, "the sessions could not be revoked")
	}
	return map[string]int{"revoked": n}, append(audit, "count", n), nil
}
