package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/oncehq/once/domain"
)

// WriteProblem answers err as problem+json, mapped like every error of the
// API (statusByCode): for handlers outside huma, such as the router's own
// refusals and the operator console. An error that is not a domain error is
// INTERNAL, its text not shown.
// The problem's instance names the request's id when it has one.
func WriteProblem(w http.ResponseWriter, r *http.Request, err error) {
	var de *domain.Error
	if !errors.As(err, &de) {
		de = domain.Wrap(domain.CodeInternal, err, "internal error")
	}
	p := problemFromDomain(de)
	p.Instance = instanceOf(r.Context())
	for k, v := range p.GetHeaders() {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}
