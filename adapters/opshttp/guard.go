package opshttp

import (
	"context"
	"net/http"
	"strings"
	"unicode"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// Guard lets the operator, and no one else, through to an Operator route.
type Guard struct {
	cred  *Credential
	clock ports.Clock
}

// NewGuard guards with token (ONCE_OPERATOR_TOKEN); with none, every
// Operator route is refused: off, never open.
func NewGuard(token string, clock ports.Clock) *Guard {
	return &Guard{cred: NewCredential(token), clock: clock}
}

// Credential is the operator credential, nil when none is set.
func (g *Guard) Credential() *Credential { return g.cred }

type operatorKey struct{}

// OperatorOf is the operator a request to an Operator route came from,
// for the audit log: the console session's name, X-Operator with the
// bearer token, or "api".
func OperatorOf(ctx context.Context) string {
	name, _ := ctx.Value(operatorKey{}).(string)
	return name
}

// Require runs next for the operator only.
func (g *Guard) Require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, err := g.authenticate(r)
		if err != nil {
			if domain.ErrorCode(err) == domain.CodeUnauthenticated {
				w.Header().Set("WWW-Authenticate", `Bearer realm="once operator"`)
			}
			httpapi.WriteProblem(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), operatorKey{}, name)))
	})
}

// authenticate accepts the operator token as a bearer token (machine
// callers: curl, scripts) or the console's session cookie (its page). A
// change made through the session must also be a JSON request, which a
// cross-site form cannot send, for a browser too old to say where a
// request comes from (refuseCrossSite).
func (g *Guard) authenticate(r *http.Request) (string, error) {
	if g.cred == nil {
		return "", domain.Errorf(domain.CodeForbidden, "operator actions are off: set ONCE_OPERATOR_TOKEN to turn them on")
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		token, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok || !g.cred.Matches(token) {
			return "", domain.Errorf(domain.CodeUnauthenticated, "the operator token is required: Authorization: Bearer <ONCE_OPERATOR_TOKEN>")
		}
		if name := OperatorName(r.Header.Get("X-Operator")); name != "" {
			return name, nil
		}
		return "api", nil
	}
	name, ok := g.SessionOperator(r)
	if !ok {
		return "", domain.Errorf(domain.CodeUnauthenticated, "the operator token is required: Authorization: Bearer <ONCE_OPERATOR_TOKEN>, or log in to the console")
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			return "", domain.Errorf(domain.CodeForbidden, "a change needs a same-origin JSON request")
		}
	}
	return name, nil
}

// SessionOperator reads the operator of a valid session cookie.
func (g *Guard) SessionOperator(r *http.Request) (string, bool) {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return "", false
	}
	return g.cred.SessionOperator(c.Value, g.clock.Now())
}

// OperatorName makes a name typed by an operator fit for a log line:
// printable, trimmed, at most 64 runes.
func OperatorName(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, strings.TrimSpace(s))
	if r := []rune(s); len(r) > 64 {
		s = string(r[:64])
	}
	return s
}
