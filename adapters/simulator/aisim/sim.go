// Package aisim simulates an AI provider behind ports.AIProvider faithfully
// enough to test workers that must never pay twice: it honours request
// tokens as a billing provider does (a token is executed and charged once,
// a repeat gets the first result free), counts the charges it made, and
// fails on demand, before acting or after charging.
package aisim

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/oncehq/once/adapters/simulator/simcore"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

var _ ports.AIProvider = (*Sim)(nil)

// ForbiddenWord in the instructions makes the provider refuse the request
// under its content policy: a permanent CodeValidation error.
const ForbiddenWord = "forbidden"

// Option configures a Sim.
type Option func(*Sim)

// WithLatency makes every call take d (or until its context ends).
func WithLatency(d time.Duration) Option { return func(s *Sim) { s.faults.SetLatency(d) } }

// Sim is a simulated AI provider. It is safe for concurrent use.
type Sim struct {
	faults  *simcore.Faults
	journal Journal

	mu    sync.Mutex
	calls int
	// done holds the first result of each executed token and the kind it
	// was for.
	done    map[string]outcome
	charges simcore.Tally
}

type outcome struct {
	kind   model.AIKind
	result ports.AIResult
}

// New returns a Sim without latency or injected failures.
func New(opts ...Option) *Sim {
	s := &Sim{faults: simcore.NewFaults("provider", "call"), done: map[string]outcome{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// FailNext makes the next n calls fail before the provider acts, with err
// (a CodeUnavailable outage if err is nil).
func (s *Sim) FailNext(n int, err error) { s.faults.FailNext(n, err) }

// FailAfterCharge makes the next n calls that get past FailNext answer with
// a timeout (CodeUnavailable) after the provider acted: a new token is
// executed and charged, a repeated token's first result looked up, and then
// the answer is lost, as when the connection dies after the provider did
// (and billed) the work.
func (s *Sim) FailAfterCharge(n int) { s.faults.FailAfter(n) }

// Generate executes a request once per request token: the first call with
// a token generates (Result) and charges Units(kind); a repeated token gets
// the first result again and is not charged. The request's other fields may
// differ on a repeat (the product may have been edited meanwhile): as with
// real providers, the token alone decides.
//
// Errors: CodeValidation for a missing token, an unknown kind or
// instructions containing ForbiddenWord (content policy; nothing is
// charged), CodeConflict for a token reused for another kind,
// CodeUnavailable for injected outages, timeouts and a context that ended
// while waiting; the injected error for FailNext.
func (s *Sim) Generate(ctx context.Context, req ports.AIRequest) (ports.AIResult, error) {
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	if err := s.faults.Wait(ctx); err != nil {
		return ports.AIResult{}, err
	}
	if err := s.faults.Abandoned(ctx); err != nil {
		return ports.AIResult{}, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.faults.Before(); err != nil {
		return ports.AIResult{}, err
	}
	switch {
	case req.RequestToken == "":
		return ports.AIResult{}, domain.Errorf(domain.CodeValidation, "a request token is required")
	case !req.Kind.Valid():
		return ports.AIResult{}, domain.Errorf(domain.CodeValidation, "unknown kind %q", req.Kind)
	case strings.Contains(strings.ToLower(req.Instructions), ForbiddenWord):
		return ports.AIResult{}, domain.Errorf(domain.CodeValidation, "the request was refused under the content policy")
	}

	first, ok := s.done[req.RequestToken]
	if ok && first.kind != req.Kind {
		return ports.AIResult{}, domain.Errorf(domain.CodeConflict, "request token reused for another kind")
	}
	if !ok {
		first = outcome{kind: req.Kind, result: Result(req)}
		// Recorded in the Journal first, then charged.
		charge := Charge{Token: req.RequestToken, Kind: req.Kind, Result: first.result}
		if err := simcore.Perform(s.journal, charge, "provider", s.applyLocked); err != nil {
			return ports.AIResult{}, err
		}
	}
	if err := s.faults.After(); err != nil {
		return ports.AIResult{}, err
	}
	return cloneResult(first.result), nil
}

// Calls returns how many calls were received, failed or not.
func (s *Sim) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Charges returns how many requests were charged over all tokens.
func (s *Sim) Charges() int { return s.charges.Total() }

// ChargesFor returns how many times token was charged: 1 once executed, 0
// before, whatever the number of calls.
func (s *Sim) ChargesFor(token string) int { return s.charges.Of(token) }

func cloneResult(r ports.AIResult) ports.AIResult {
	r.Image = append([]byte(nil), r.Image...)
	if len(r.Image) == 0 {
		r.Image = nil
	}
	return r
}
