package platformsim

import (
	"context"
	"fmt"
	"slices"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// DefaultCatalogSize is how many listings DefaultCatalog makes up for a
// shop that SetCatalog did not configure.
const DefaultCatalogSize = 3

// DefaultCatalog is the listings of a shop nobody configured: the same
// DefaultCatalogSize listings for the same shop id every time.
func DefaultCatalog(shopID string) []ports.CatalogListing {
	out := make([]ports.CatalogListing, DefaultCatalogSize)
	for i := range out {
		out[i] = ports.CatalogListing{
			ExternalID: fmt.Sprintf("%s-item-%d", shopID, i+1),
			Title:      fmt.Sprintf("Item %d of %s", i+1, shopID),
			PriceMinor: int64(1000 * (i + 1)),
			Currency:   "USD",
		}
	}
	return out
}

// SetCatalog replaces the listings shop shopID holds (on any platform)
// besides those CreateListing created there. An empty list makes the shop
// hold none.
func (s *Sim) SetCatalog(shopID string, listings []ports.CatalogListing) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if listings == nil {
		listings = []ports.CatalogListing{}
	}
	s.catalogs[shopID] = slices.Clone(listings)
}

// FetchCatalog returns the shop's listings: those set by SetCatalog (else
// DefaultCatalog), then those CreateListing created in the shop, in order
// of creation. It reads only, so it takes no token and counts no effect;
// injected failures apply (FailAfterEffect: the catalog was read, the
// answer lost).
//
// Errors: CodeValidation for an unknown platform or a missing shop,
// CodeForbidden for credentials the rule rejects, CodeUnavailable for
// injected outages, timeouts and a context that ended while waiting.
func (s *Sim) FetchCatalog(ctx context.Context, req ports.FetchCatalogRequest) ([]ports.CatalogListing, error) {
	call := newCall(CallFetchCatalog, "", req.Platform, req.ExternalShopID, req.Credentials.APIKey)
	return serve(ctx, s, call, func(call *Call) ([]ports.CatalogListing, error) {
		switch {
		case !model.ValidPlatform(req.Platform):
			return nil, domain.Errorf(domain.CodeValidation, "unknown platform %q", req.Platform)
		case req.ExternalShopID == "":
			return nil, domain.Errorf(domain.CodeValidation, "a shop is required")
		}
		if err := s.authorizeLocked(req.Platform, req.ExternalShopID, req.Credentials); err != nil {
			return nil, err
		}

		listings, ok := s.catalogs[req.ExternalShopID]
		if ok {
			listings = slices.Clone(listings)
		} else {
			listings = DefaultCatalog(req.ExternalShopID)
		}
		for _, l := range s.listings {
			if l.Platform == req.Platform && l.ExternalShopID == req.ExternalShopID {
				listings = append(listings, ports.CatalogListing{
					ExternalID: l.ID, Title: l.Title, PriceMinor: l.PriceMinor, Currency: l.Currency,
				})
			}
		}
		call.Items = len(listings)
		return listings, nil
	})
}
