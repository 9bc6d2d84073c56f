// Package platformsim simulates the marketplace platforms behind
// ports.PlatformGateway faithfully enough to test re-entrant workers: it
// honours request tokens as a real platform does (a token is executed once,
// a repeat gets the first outcome), counts the side effects it actually
// performed (verifications, listings created), holds each shop's catalog,
// and fails on demand, before acting or after.
package platformsim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"
	"time"

	"github.com/oncehq/once/adapters/simulator/simcore"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

var _ ports.PlatformGateway = (*Sim)(nil)

// InvalidAPIKey is the API key the default rule rejects.
const InvalidAPIKey = "invalid"

// RejectedReason is what the default rule says of a rejected key. It does
// not repeat the key, as the port requires.
const RejectedReason = "the API key was rejected by the platform"

// Rule decides a verification the platform performs.
type Rule func(platform, shopID string, creds model.StoreCredentials) ports.VerifyCredentialsResult

// DefaultRule accepts any credentials except an empty key or secret or the
// key InvalidAPIKey.
func DefaultRule(_, _ string, creds model.StoreCredentials) ports.VerifyCredentialsResult {
	if creds.APIKey == "" || creds.APISecret == "" || creds.APIKey == InvalidAPIKey {
		return ports.VerifyCredentialsResult{Valid: false, Reason: RejectedReason}
	}
	return ports.VerifyCredentialsResult{Valid: true}
}

// Call is one call the Sim received. It holds no credentials: only a hash
// of the API key (KeyHash), so tests can tell which key was sent.
type Call struct {
	// Kind is the port method called.
	Kind           CallKind
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
	// ListingID is the listing CreateListing created or replayed.
	ListingID string
	// Items is how many listings FetchCatalog returned (also when the answer
	// was then lost).
	Items int
	// Err is the error returned, nil on success.
	Err error
}

// CallKind names the port method a Call went to.
type CallKind string

const (
	CallVerifyCredentials CallKind = "verify_credentials"
	CallCreateListing     CallKind = "create_listing"
	CallFetchCatalog      CallKind = "fetch_catalog"
)

// Option configures a Sim.
type Option func(*Sim)

// WithLatency makes every call take d (or until its context ends).
func WithLatency(d time.Duration) Option { return func(s *Sim) { s.faults.SetLatency(d) } }

// WithRule replaces DefaultRule.
func WithRule(r Rule) Option { return func(s *Sim) { s.rule = r } }

// Sim is a simulated platform. It is safe for concurrent use.
type Sim struct {
	faults  *simcore.Faults
	rule    Rule
	journal Journal

	mu    sync.Mutex
	calls []Call
	// done holds the first outcome of each executed verification token,
	// with what was asked, so a token reused for another request is refused.
	done    map[string]outcome
	effects simcore.Tally

	// listings are the listings created, in order; listingTokens maps each
	// executed CreateListing token to its listing and what was asked.
	listings      []Listing
	listingTokens map[string]listingOutcome
	// catalogs are the shops' listings set by SetCatalog.
	catalogs map[string][]ports.CatalogListing
}

type outcome struct {
	request string
	result  ports.VerifyCredentialsResult
}

// New returns a Sim that answers with DefaultRule and no latency.
func New(opts ...Option) *Sim {
	s := &Sim{
		faults:        simcore.NewFaults("platform", "call"),
		rule:          DefaultRule,
		done:          map[string]outcome{},
		listingTokens: map[string]listingOutcome{},
		catalogs:      map[string][]ports.CatalogListing{},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// FailNext makes the next n calls (of any method) fail before the platform
// acts, with err (a CodeUnavailable outage if err is nil).
func (s *Sim) FailNext(n int, err error) { s.faults.FailNext(n, err) }

// FailAfterEffect makes the next n calls (of any method) that get past
// FailNext answer with a timeout (CodeUnavailable) after the platform acted:
// a new token is executed and its effect counted, a repeated token's first
// outcome looked up, a catalog read, and then the answer is lost, as when a
// connection dies or the caller times out after the platform did the work.
func (s *Sim) FailAfterEffect(n int) { s.faults.FailAfter(n) }

// VerifyCredentials executes a verification once per request token.
//
// Errors: CodeValidation for a missing token or an unknown platform,
// CodeConflict for a token reused for a different request, CodeUnavailable
// for injected outages, timeouts and a context that ended while waiting.
func (s *Sim) VerifyCredentials(ctx context.Context, req ports.VerifyCredentialsRequest) (ports.VerifyCredentialsResult, error) {
	call := newCall(CallVerifyCredentials, req.RequestToken, req.Platform, req.ExternalShopID, req.Credentials.APIKey)
	// On an injected timeout call.Result keeps what the platform decided;
	// the caller never hears it.
	return serve(ctx, s, call, func(call *Call) (ports.VerifyCredentialsResult, error) {
		switch {
		case req.RequestToken == "":
			return ports.VerifyCredentialsResult{}, domain.Errorf(domain.CodeValidation, "a request token is required")
		case !model.ValidPlatform(req.Platform):
			return ports.VerifyCredentialsResult{}, domain.Errorf(domain.CodeValidation, "unknown platform %q", req.Platform)
		}
		if first, ok := s.done[req.RequestToken]; ok {
			if first.request != verifyRequest(req.Platform, req.ExternalShopID, call.KeyHash) {
				return ports.VerifyCredentialsResult{}, domain.Errorf(domain.CodeConflict, "request token reused for a different request")
			}
			call.Replayed, call.Result = true, first.result
			return call.Result, nil
		}
		result := s.rule(req.Platform, req.ExternalShopID, req.Credentials)
		if err := s.performLocked(Effect{
			Kind: CallVerifyCredentials, Token: req.RequestToken, Platform: req.Platform,
			ExternalShopID: req.ExternalShopID, KeyHash: call.KeyHash, Valid: result.Valid, Reason: result.Reason,
		}); err != nil {
			return ports.VerifyCredentialsResult{}, err
		}
		call.Effect, call.Result = true, result
		return call.Result, nil
	})
}

// serve answers one call of any method: the latency, an injected failure
// before the platform acts, act (with mu held; it fills in call), an
// injected loss of the answer after the platform acted. Every call is
// recorded in Calls, with the error it was answered with.
func serve[R any](ctx context.Context, s *Sim, call Call, act func(call *Call) (R, error)) (R, error) {
	var none R
	if err := s.wait(ctx, call); err != nil {
		return none, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	result, err := func() (R, error) {
		if err := s.faults.Before(); err != nil {
			return none, err
		}
		result, err := act(&call)
		if err != nil {
			return none, err
		}
		return result, s.faults.After()
	}()
	if err != nil {
		call.Err = err
		result = none
	}
	s.calls = append(s.calls, call)
	return result, err
}

// newCall starts the record of a call. It keeps a hash of the API key,
// never the key.
func newCall(kind CallKind, token, platform, shopID, apiKey string) Call {
	return Call{
		Kind:           kind,
		Token:          token,
		Platform:       platform,
		ExternalShopID: shopID,
		KeyHash:        KeyHash(apiKey),
		At:             time.Now(),
	}
}

// wait applies the configured latency. A context that ends first abandons
// the call before the platform acts: it is recorded and answered with
// CodeUnavailable.
func (s *Sim) wait(ctx context.Context, call Call) error {
	if err := s.faults.Wait(ctx); err != nil {
		call.Err = err
		s.mu.Lock()
		s.calls = append(s.calls, call)
		s.mu.Unlock()
		return err
	}
	return nil
}

// authorizeLocked refuses credentials the platform's rule would reject, as
// a real platform refuses a call it cannot authenticate. The error never
// repeats the credentials.
func (s *Sim) authorizeLocked(platform, shopID string, creds model.StoreCredentials) error {
	if !s.rule(platform, shopID, creds).Valid {
		return domain.Errorf(domain.CodeForbidden, "the platform refused the credentials")
	}
	return nil
}

// Calls returns every call received so far, of every method, in order.
func (s *Sim) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Effects returns how many side effects were performed for token: 1 once
// it has been executed, 0 before, whatever the number of calls.
func (s *Sim) Effects(token string) int { return s.effects.Of(token) }

// EffectCount returns the side effects performed over all tokens: the
// verifications and the listings created.
func (s *Sim) EffectCount() int { return s.effects.Total() }

// KeyHash is the short hash Calls record instead of an API key.
func KeyHash(apiKey string) string {
	sum := sha256.Sum256([]byte(apiKey))
	return hex.EncodeToString(sum[:8])
}
