package simhttp

import (
	"encoding/json"
	"time"

	"github.com/oncehq/once/adapters/simulator/platformsim"
	"github.com/oncehq/once/domain/model"
)

// PlatformEffects is the ledger's platform effects (verifications and
// listings created, once per request token) by when they happened: per
// platform, and per shop (ShopKey), in order, so a bench can tell the rate
// each shop got.
type PlatformEffects struct {
	PerPlatform map[string][]time.Time `json:"per_platform"`
	PerShop     map[string][]time.Time `json:"per_shop"`
}

// platformEffectsOf sorts the platform effects among entries.
func platformEffectsOf(entries []Entry) PlatformEffects {
	out := PlatformEffects{PerPlatform: map[string][]time.Time{}, PerShop: map[string][]time.Time{}}
	for _, e := range entries {
		if !e.Effect || (e.Kind != KindVerify && e.Kind != KindListing) {
			continue
		}
		var eff platformsim.Effect
		if json.Unmarshal(e.Data, &eff) != nil {
			continue // restore already refused such a ledger; an entry appended since is ours
		}
		d := model.Destination{System: eff.Platform, Account: eff.ExternalShopID}
		if eff.Listing != nil {
			d = model.Destination{System: eff.Listing.Platform, Account: eff.Listing.ExternalShopID}
		}
		shop := ShopKey(d)
		out.PerPlatform[d.System] = append(out.PerPlatform[d.System], e.At)
		out.PerShop[shop] = append(out.PerShop[shop], e.At)
	}
	return out
}
