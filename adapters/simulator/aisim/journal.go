package aisim

import (
	"fmt"

	"github.com/oncehq/once/adapters/simulator/simcore"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Charge is one request the Sim executed and billed: the token, the kind
// it was for and the result it produced. A Journal keeps charges beyond
// the process and Restore replays them, so a token charged before a
// restart still gets its first result free.
type Charge struct {
	Token  string         `json:"token"`
	Kind   model.AIKind   `json:"kind"`
	Result ports.AIResult `json:"result"`
}

// Journal keeps the Sim's charges beyond its process. Record is called
// with the Sim's lock held and before the charge is visible to anyone: the
// Sim charges only once Record returned nil, so an error leaves the token
// unexecuted and the call fails with CodeUnavailable.
type Journal = simcore.Journal[Charge]

// WithJournal makes the Sim record every charge in j before it is made.
func WithJournal(j Journal) Option { return func(s *Sim) { s.journal = j } }

// Restore replays charges recorded by a Journal, in order, as if this Sim
// had made them. It records nothing in the Journal. Call it before the
// first call.
func (s *Sim) Restore(charges []Charge) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simcore.Replay(charges, "charge", func(c Charge) error {
		if c.Token == "" || !c.Kind.Valid() {
			return fmt.Errorf("no token or an unknown kind %q", c.Kind)
		}
		return nil
	}, s.applyLocked)
}

// applyLocked records c as the token's first result. Call with mu held.
func (s *Sim) applyLocked(c Charge) {
	s.done[c.Token] = outcome{kind: c.Kind, result: cloneResult(c.Result)}
	s.charges.Add(c.Token)
}
