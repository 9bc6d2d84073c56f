// Package platformsim simulates the marketplace platforms behind
// ports.PlatformGateway faithfully enough to test re-entrant workers: it
// honours request tokens as a real platform does (a token is executed once,
// a repeat gets the first outcome), counts the side effects it actually
// performed, and fails on demand, before acting or after.
package platformsim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"
	"time"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

var _ ports.PlatformGateway = (*Sim)(nil)

// InvalidAPIKey is the API key the default rule rejects.
const InvalidAPIKey = "invalid"

// RejectedReason is what the default rule says of a rejected key. It does
// not repeat the key, as the port requires.
const RejectedReason = "the API key was rejected by the platform"

// Rule decides a verification the platform performs.
type Rule func(platform, shopID string, creds domain.StoreCredentials) ports.VerifyCredentialsResult

// DefaultRule accepts any credentials except an empty key or secret or the
// key InvalidAPIKey.
func DefaultRule(_, _ string, creds domain.StoreCredentials) ports.VerifyCredentialsResult {
	if creds.APIKey == "" || creds.APISecret == "" || creds.APIKey == InvalidAPIKey {
		return ports.VerifyCredentialsResult{Valid: false, Reason: RejectedReason}
	}
	return ports.VerifyCredentialsResult{Valid: true}
}

// Call is one call the Sim received. It holds no credentials: only a hash
// of the API key (KeyHash), so tests can tell which key was sent.
type Call struct {
	Token          string
	Platform       string
	ExternalShopID string
	KeyHash        string
	At             time.Time
	// Replayed: the token had been executed before; the first outcome was
	// returned and nothing was done.
	Replayed bool
	// Effect: this call performed the side effect.
	Effect bool
	// Result is what the platform decided (also when the answer was then
	// lost to an injected timeout).
	Result ports.VerifyCredentialsResult
	// Err is the error returned, nil on success.
	Err error
}

// Option configures a Sim.
type Option func(*Sim)

// WithLatency makes every call take d (or until its context ends).
func WithLatency(d time.Duration) Option { return func(s *Sim) { s.latency = d } }

// WithRule replaces DefaultRule.
func WithRule(r Rule) Option { return func(s *Sim) { s.rule = r } }

// Sim is a simulated platform. It is safe for concurrent use.
type Sim struct {
	latency time.Duration
	rule    Rule

	mu    sync.Mutex
	calls []Call
	// done holds the first outcome of each executed token, with what was
	// asked, so a token reused for another request is refused.
	done    map[string]outcome
	effects map[string]int
	total   int

	failNext        int
	failNextErr     error
	failAfterEffect int
}

type outcome struct {
	request string
	result  ports.VerifyCredentialsResult
}

// New returns a Sim that answers with DefaultRule and no latency.
func New(opts ...Option) *Sim {
	s := &Sim{rule: DefaultRule, done: map[string]outcome{}, effects: map[string]int{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// FailNext makes the next n calls fail before the platform acts, with err
// (a CodeUnavailable outage if err is nil).
func (s *Sim) FailNext(n int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		err = domain.Errorf(domain.CodeUnavailable, "simulated platform outage")
	}
	s.failNext, s.failNextErr = n, err
}

// FailAfterEffect makes the next n calls that get past FailNext answer with
// a timeout (CodeUnavailable) after the platform acted: a new token is
// executed and its effect counted, a repeated token's first outcome looked
// up, and then the answer is lost, as when a connection dies or the caller
// times out after the platform did the work.
func (s *Sim) FailAfterEffect(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAfterEffect = n
}

// VerifyCredentials executes a verification once per request token.
//
// Errors: CodeValidation for a missing token or an unknown platform,
// CodeConflict for a token reused for a different request, CodeUnavailable
// for injected outages, timeouts and a context that ended while waiting.
func (s *Sim) VerifyCredentials(ctx context.Context, req ports.VerifyCredentialsRequest) (ports.VerifyCredentialsResult, error) {
	if s.latency > 0 {
		t := time.NewTimer(s.latency)
		select {
		case <-ctx.Done():
			t.Stop()
			err := domain.Wrap(domain.CodeUnavailable, ctx.Err(), "platform call abandoned")
			s.record(req, Call{Err: err})
			return ports.VerifyCredentialsResult{}, err
		case <-t.C:
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	call := s.newCallLocked(req)
	fail := func(err error) (ports.VerifyCredentialsResult, error) {
		call.Err = err
		s.calls = append(s.calls, call)
		return ports.VerifyCredentialsResult{}, err
	}

	if s.failNext > 0 {
		s.failNext--
		return fail(s.failNextErr)
	}
	switch {
	case req.RequestToken == "":
		return fail(domain.Errorf(domain.CodeValidation, "a request token is required"))
	case !domain.ValidPlatform(req.Platform):
		return fail(domain.Errorf(domain.CodeValidation, "unknown platform %q", req.Platform))
	}

	request := req.Platform + "\x00" + req.ExternalShopID + "\x00" + call.KeyHash
	if first, ok := s.done[req.RequestToken]; ok {
		if first.request != request {
			return fail(domain.Errorf(domain.CodeConflict, "request token reused for a different request"))
		}
		call.Replayed, call.Result = true, first.result
	} else {
		call.Effect = true
		call.Result = s.rule(req.Platform, req.ExternalShopID, req.Credentials)
		s.done[req.RequestToken] = outcome{request: request, result: call.Result}
		s.effects[req.RequestToken]++
		s.total++
	}

	if s.failAfterEffect > 0 {
		s.failAfterEffect--
		// call.Result keeps what the platform decided; the caller never
		// hears it.
		return fail(domain.Errorf(domain.CodeUnavailable, "platform call timed out"))
	}
	s.calls = append(s.calls, call)
	return call.Result, nil
}

func (s *Sim) newCallLocked(req ports.VerifyCredentialsRequest) Call {
	return Call{
		Token:          req.RequestToken,
		Platform:       req.Platform,
		ExternalShopID: req.ExternalShopID,
		KeyHash:        KeyHash(req.Credentials.APIKey),
		At:             time.Now(),
	}
}

// record appends a call that failed before reaching the platform.
func (s *Sim) record(req ports.VerifyCredentialsRequest, c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	call := s.newCallLocked(req)
	call.Err = c.Err
	s.calls = append(s.calls, call)
}

// Calls returns every call received so far, in order.
func (s *Sim) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Effects returns how many side effects were performed for token: 1 once
// it has been executed, 0 before, whatever the number of calls.
func (s *Sim) Effects(token string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.effects[token]
}

// EffectCount returns the side effects performed over all tokens.
func (s *Sim) EffectCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// KeyHash is the short hash Calls record instead of an API key.
func KeyHash(apiKey string) string {
	sum := sha256.Sum256([]byte(apiKey))
	return hex.EncodeToString(sum[:8])
}
