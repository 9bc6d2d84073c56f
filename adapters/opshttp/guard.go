package opshttp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// SessionCookie is the operator console's session cookie.
const SessionCookie = "once_console"

// SessionTTL is how long a console login lasts, unless ended before.
const SessionTTL = 12 * time.Hour

// Guard lets the operators, and no one else, through to an Operator
// route, and keeps the console's sessions.
type Guard struct {
	operators *Operators
	sessions  ports.OperatorSessions
	clock     ports.Clock
	throttle  *Throttle
}

// NewGuard guards with operators; with none, every Operator route is
// refused: off, never open. sessions keeps the console's sessions, where
// every process of the deployment reads them.
func NewGuard(operators *Operators, sessions ports.OperatorSessions, clock ports.Clock) *Guard {
	if operators == nil {
		operators = NewOperators()
	}
	return &Guard{operators: operators, sessions: sessions, clock: clock, throttle: NewThrottle()}
}

// On says there is an operator: the operator routes and the console are
// served.
func (g *Guard) On() bool { return !g.operators.Empty() }

type operatorKey struct{}

// OperatorOf is the operator a request to an Operator route came from, for
// the audit log: the name of the credential it presented (the bearer
// token's, or the session's).
func OperatorOf(ctx context.Context) string {
	name, _ := ctx.Value(operatorKey{}).(string)
	return name
}

// Require runs next for an operator only.
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

const offMessage = "operator actions are off: set ONCE_OPERATORS (or ONCE_OPERATORS_FILE, or the legacy ONCE_OPERATOR_TOKEN) to turn them on"

// authenticate accepts an operator's token as a bearer token (machine
// callers: curl, scripts) or the console's session cookie (its page). A
// change made through the session must also be a JSON request, which a
// cross-site form cannot send, for a browser too old to say where a
// request comes from (refuseCrossSite).
func (g *Guard) authenticate(r *http.Request) (string, error) {
	if !g.On() {
		return "", domain.Errorf(domain.CodeForbidden, offMessage)
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		return g.identify(r, strings.TrimPrefix(auth, "Bearer "), "an operator's token is required: Authorization: Bearer <token>")
	}
	name, ok, err := g.sessionOperator(r)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", domain.Errorf(domain.CodeUnauthenticated, "an operator's token is required: Authorization: Bearer <token>, or log in to the console")
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			return "", domain.Errorf(domain.CodeForbidden, "a change needs a same-origin JSON request")
		}
	}
	return name, nil
}

// identify is the operator whose token presented is, unless the request's
// address (or everyone) has failed too often lately: then 429 before the
// token is looked at. A wrong token counts as a failure.
func (g *Guard) identify(r *http.Request, presented, refusal string) (string, error) {
	now := g.clock.Now()
	if wait := g.throttle.Check(r, now); wait > 0 {
		err := domain.Errorf(domain.CodeRateLimited, "too many failed operator logins from this address or in all: try again later")
		err.RetryAfter = wait
		return "", err
	}
	name, ok := g.operators.Identify(presented)
	if !ok {
		g.throttle.Failed(r, now)
		return "", domain.Errorf(domain.CodeUnauthenticated, "%s", refusal)
	}
	return name, nil
}

// Login starts a console session for the operator whose token presented
// is: the value of its cookie and the operator's name. A wrong token is
// CodeUnauthenticated, and counts against the address; past its bound,
// CodeRateLimited with a RetryAfter.
func (g *Guard) Login(r *http.Request, presented string) (cookie, name string, err error) {
	if !g.On() {
		return "", "", domain.Errorf(domain.CodeForbidden, offMessage)
	}
	name, err = g.identify(r, presented, "that is no operator's token")
	if err != nil {
		return "", "", err
	}
	fingerprint, _ := g.operators.fingerprint(name)
	secret := make([]byte, 32)
	_, _ = rand.Read(secret) // never fails (crypto/rand)
	cookie = base64.RawURLEncoding.EncodeToString(secret)
	now := g.clock.Now()
	err = g.sessions.Create(r.Context(), model.OperatorSession{
		ID: sessionID(cookie), Operator: name, Credential: fingerprint, CreatedAt: now, ExpiresAt: now.Add(SessionTTL),
	})
	if err != nil {
		return "", "", domain.Wrap(domain.CodeUnavailable, err, "the session could not be kept")
	}
	return cookie, name, nil
}

// Logout ends the session of the request's cookie, in every process.
func (g *Guard) Logout(r *http.Request) error {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	return g.sessions.Revoke(r.Context(), sessionID(c.Value))
}

// RevokeSessions ends every console session of operator, in every
// process, and says how many were live.
func (g *Guard) RevokeSessions(ctx context.Context, operator string) (int, error) {
	return g.sessions.RevokeOperator(ctx, operator, g.clock.Now())
}

// SessionOperator is the operator of the request's session, if it holds a
// live one.
func (g *Guard) SessionOperator(r *http.Request) (string, bool) {
	name, ok, err := g.sessionOperator(r)
	return name, ok && err == nil
}

// sessionOperator reads the request's session where it is kept (one read
// per console request: operators are few): it is live if it was not
// ended, has not expired, and its operator is still configured with the
// credential it logged in with.
func (g *Guard) sessionOperator(r *http.Request) (string, bool, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" || !g.On() {
		return "", false, nil
	}
	s, ok, err := g.sessions.Get(r.Context(), sessionID(c.Value), g.clock.Now())
	if err != nil {
		return "", false, domain.Wrap(domain.CodeUnavailable, err, "the console's session could not be checked")
	}
	if !ok {
		return "", false, nil
	}
	if fingerprint, known := g.operators.fingerprint(s.Operator); !known || fingerprint != s.Credential {
		return "", false, nil
	}
	return s.Operator, true, nil
}

// sessionID is what the store keeps of a session's cookie: its SHA-256.
func sessionID(cookie string) string {
	sum := sha256.Sum256([]byte(cookie))
	return hex.EncodeToString(sum[:])
}
