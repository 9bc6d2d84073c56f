package platformsim

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Listing is a listing the Sim created. It holds no credentials.
type Listing struct {
	ID    string `json:"id"`
	Token string `json:"token"`
	ListingContent
	CreatedAt time.Time `json:"created_at"`
}

// ListingContent is what a create asks a listing to be: the body of the
// simulated API's create (simhttp), and what a repeated token must ask
// again.
type ListingContent struct {
	Platform       string `json:"platform"`
	ExternalShopID string `json:"external_shop_id"`
	// SKU is the seller's id of the item: the shop holds one listing per
	// SKU, and a new token for a SKU it lists replaces that listing's
	// content. Empty: every token creates a listing of its own.
	SKU         string `json:"sku,omitempty"`
	Title       string `json:"title"`
	Description string `json:"description"`
	PriceMinor  int64  `json:"price_minor"`
	Currency    string `json:"currency"`
}

type listingOutcome struct {
	request string
	index   int
}

// CreateListing creates one listing per request token, or, for a SKU the
// shop lists already, replaces that listing's content (same id). A
// repeated token with the same request returns the listing's id and
// changes nothing, whoever's credentials it comes with (the token is the platform's
// idempotency key, and credentials may be rotated between attempts).
// Injected failures apply: FailNext before anything happens,
// FailAfterEffect after the listing was created (or looked up).
//
// Errors: CodeValidation for a missing token, shop or title, a negative
// price or an unknown platform; CodeForbidden for credentials the rule
// rejects; CodeConflict, with ResourceID the first listing's id, for a
// token reused with another platform, shop, title, description, price or
// currency; CodeUnavailable for injected outages, timeouts and a context
// that ended while waiting. No error repeats the credentials.
func (s *Sim) CreateListing(ctx context.Context, req ports.CreateListingRequest) (ports.CreateListingResult, error) {
	call := newCall(CallCreateListing, req.RequestToken, req.Platform, req.ExternalShopID, req.Credentials.APIKey)
	// On an injected timeout the listing exists; the caller never hears of
	// it.
	return serve(ctx, s, call, func(call *Call) (ports.CreateListingResult, error) {
		if err := validateListing(req); err != nil {
			return ports.CreateListingResult{}, err
		}
		if err := s.authorizeLocked(req.Platform, req.ExternalShopID, req.Credentials); err != nil {
			return ports.CreateListingResult{}, err
		}

		// l is the listing this call asks for: created (or the SKU's
		// replaced) if the token is new, compared with the first request of
		// the token otherwise.
		l := Listing{
			ID:    fmt.Sprintf("lst_%06d", len(s.listings)+1),
			Token: req.RequestToken,
			ListingContent: ListingContent{
				Platform: req.Platform, ExternalShopID: req.ExternalShopID, SKU: req.SKU, Title: req.Title,
				Description: req.Description, PriceMinor: req.PriceMinor, Currency: req.Currency,
			},
			CreatedAt: call.At,
		}
		if at, ok := s.skuLocked(l.ListingContent); ok {
			l.ID, l.CreatedAt = s.listings[at].ID, s.listings[at].CreatedAt
		}
		if first, ok := s.listingTokens[req.RequestToken]; ok {
			id := s.listings[first.index].ID
			if first.request != listingRequest(l) {
				return ports.CreateListingResult{}, &domain.Error{
					Code:       domain.CodeConflict,
					Message:    "request token reused for a different listing",
					ResourceID: id,
				}
			}
			call.Replayed, call.ListingID = true, id
		} else {
			if err := s.performLocked(Effect{Kind: CallCreateListing, Token: req.RequestToken, Listing: &l}); err != nil {
				return ports.CreateListingResult{}, err
			}
			call.Effect, call.ListingID = true, l.ID
		}
		return ports.CreateListingResult{ExternalListingID: call.ListingID}, nil
	})
}

func validateListing(req ports.CreateListingRequest) error {
	switch {
	case req.RequestToken == "":
		return domain.Errorf(domain.CodeValidation, "a request token is required")
	case !model.ValidPlatform(req.Platform):
		return domain.Errorf(domain.CodeValidation, "unknown platform %q", req.Platform)
	case req.ExternalShopID == "":
		return domain.Errorf(domain.CodeValidation, "a shop is required")
	case strings.TrimSpace(req.Title) == "":
		return domain.Errorf(domain.CodeValidation, "a listing needs a title")
	case req.PriceMinor < 0:
		return domain.Errorf(domain.CodeValidation, "a listing price cannot be negative")
	}
	return nil
}

// skuLocked is the index of the shop's listing of c's SKU, if it has one.
// Call with mu held.
func (s *Sim) skuLocked(c ListingContent) (int, bool) {
	if c.SKU == "" {
		return 0, false
	}
	i := slices.IndexFunc(s.listings, func(l Listing) bool {
		return l.SKU == c.SKU && l.Platform == c.Platform && l.ExternalShopID == c.ExternalShopID
	})
	return i, i >= 0
}

// Listings returns every listing created so far, in order (a replaced one
// with its latest content).
func (s *Sim) Listings() []Listing {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.listings)
}

// ListingCount returns how many listings were created: the number of
// products on the platform, whatever the number of calls.
func (s *Sim) ListingCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.listings)
}
