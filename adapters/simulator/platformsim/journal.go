package platformsim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/oncehq/once/adapters/simulator/simcore"
	"github.com/oncehq/once/ports"
)

// Effect is one side effect the Sim performed: a verification (Kind
// CallVerifyCredentials: what was asked and what the platform decided) or
// a listing created (CallCreateListing: Listing). It holds no credentials,
// only the API key's hash. A Journal keeps effects beyond the process and
// Restore replays them, so a token executed before a restart still
// answers with its first outcome.
type Effect struct {
	Kind           CallKind `json:"kind"`
	Token          string   `json:"token"`
	Platform       string   `json:"platform,omitempty"`
	ExternalShopID string   `json:"external_shop_id,omitempty"`
	KeyHash        string   `json:"key_hash,omitempty"`
	Valid          bool     `json:"valid,omitempty"`
	Reason         string   `json:"reason,omitempty"`
	Listing        *Listing `json:"listing,omitempty"`
}

// Journal keeps the Sim's effects beyond its process. Record is called
// with the Sim's lock held and before the effect is visible to anyone: the
// Sim acts only once Record returned nil, so an error leaves the token
// unexecuted and the call fails with CodeUnavailable.
type Journal = simcore.Journal[Effect]

// WithJournal makes the Sim record every effect in j before it acts.
func WithJournal(j Journal) Option { return func(s *Sim) { s.journal = j } }

// Restore replays effects recorded by a Journal, in order, as if this Sim
// had performed them: their tokens answer with their first outcome and
// the listings exist (new ones are numbered after them). It records
// nothing in the Journal. Call it before the first call.
func (s *Sim) Restore(effects []Effect) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simcore.Replay(effects, "effect", func(e Effect) error {
		switch {
		case e.Token == "":
			return errors.New("no token")
		case e.Kind == CallCreateListing && e.Listing == nil:
			return errors.New("a listing effect without its listing")
		case e.Kind != CallVerifyCredentials && e.Kind != CallCreateListing:
			return fmt.Errorf("unknown kind %q", e.Kind)
		}
		return nil
	}, s.applyLocked)
}

// performLocked makes e happen: recorded in the Journal first, then
// applied. Call with mu held.
func (s *Sim) performLocked(e Effect) error {
	return simcore.Perform(s.journal, e, "platform", s.applyLocked)
}

// applyLocked changes the Sim's state as e says. Call with mu held.
func (s *Sim) applyLocked(e Effect) {
	switch e.Kind {
	case CallVerifyCredentials:
		s.done[e.Token] = outcome{
			request: verifyRequest(e.Platform, e.ExternalShopID, e.KeyHash),
			result:  ports.VerifyCredentialsResult{Valid: e.Valid, Reason: e.Reason},
		}
	case CallCreateListing:
		l := *e.Listing
		if at, ok := s.skuLocked(l.ListingContent); ok {
			s.listingTokens[e.Token] = listingOutcome{request: listingRequest(l), index: at}
			s.listings[at] = l
			break
		}
		s.listingTokens[e.Token] = listingOutcome{request: listingRequest(l), index: len(s.listings)}
		s.listings = append(s.listings, l)
	}
	s.effects.Add(e.Token)
}

// verifyRequest is what a verification token stands for: a repeat must
// ask the same.
func verifyRequest(platform, shopID, keyHash string) string {
	return platform + "\x00" + shopID + "\x00" + keyHash
}

// listingRequest is what a listing token stands for: a repeat must ask for
// the same listing (credentials aside: they may be rotated between
// attempts).
func listingRequest(l Listing) string {
	return strings.Join([]string{l.Platform, l.ExternalShopID, l.SKU, l.Title, l.Description,
		strconv.FormatInt(l.PriceMinor, 10), l.Currency}, "\x00")
}
