package simhttp

import (
	"net/http"
	"time"

	"github.com/oncehq/once/adapters/simulator/platformsim"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

// Kind names a call the simulated systems answer; ledger entries and
// faults are sorted by it.
type Kind string

const (
	// KindVerify is a credential verification (a side effect per token).
	KindVerify Kind = "platform.verify"
	// KindListing is a listing created (a side effect per token).
	KindListing Kind = "platform.listing"
	// KindCatalog is a catalog read (no token; recorded as a read).
	KindCatalog Kind = "platform.catalog"
	// KindGenerate is an AI generation, charged once per token.
	KindGenerate Kind = "ai.generate"
	// KindFetch is a material file fetched (no token; recorded as a read).
	KindFetch Kind = "material.fetch"
)

// Kinds are every Kind, in the order the systems are listed.
var Kinds = []Kind{KindVerify, KindListing, KindCatalog, KindGenerate, KindFetch}

// Routes of the simulated systems, and of their administration.
const (
	PathVerify   = "/platform/verifications"
	PathListings = "/platform/listings"
	PathCatalog  = "/platform/catalog"
	PathGenerate = "/ai/generations"
	PathFetch    = "/material/fetches"

	PathLedger  = "/ledger"
	PathFaults  = "/admin/faults"
	PathHeld    = "/admin/held"
	PathRelease = "/admin/release"
	PathHealth  = "/healthz"

	// PathPlatforms/{platform}/latency, /outage and /buckets/{scope} set
	// (PUT) and clear (DELETE) one platform's latency, outage and buckets.
	PathPlatforms   = "/admin/platforms"
	PathThrottles   = "/admin/throttles"
	PathConcurrency = "/admin/concurrency"
	PathEffects     = "/admin/effects"
	// PathCounters (DELETE) forgets the throttle counts and the
	// concurrency read-out.
	PathCounters = "/admin/counters"
)

// Headers. The request token travels as the idempotency key real platforms
// take; the shop's credentials travel in headers, never in a body.
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderAPIKey         = "X-Platform-Api-Key"
	HeaderAPISecret      = "X-Platform-Api-Secret"
	// HeaderOrderingKey names the ordering key a call belongs to, if any:
	// the simulator records how many calls of each key were in flight.
	HeaderOrderingKey = "X-Once-Ordering-Key"
	// HeaderCallLimit is the shop bucket's "used/capacity" on every answer
	// of a platform with shop buckets, under Shopify's name whatever the
	// platform.
	HeaderCallLimit = "X-Shopify-Shop-Api-Call-Limit"
	// HeaderRateLimitScope says, on a 429, whose quota is spent: "shop"
	// (the shop's bucket) or "application" (the platform's bucket, which
	// every shop of our application spends together), as GitHub's
	// x-ratelimit-resource names the limit a request hit.
	HeaderRateLimitScope = "X-RateLimit-Scope"
)

// The values of HeaderRateLimitScope.
const (
	RateLimitScopeShop        = "shop"
	RateLimitScopeApplication = "application"
)

type verifyBody struct {
	Platform       string `json:"platform"`
	ExternalShopID string `json:"external_shop_id"`
}

type verifyAnswer struct {
	Valid  bool   `json:"valid"`
	Reason string `json:"reason,omitempty"`
}

// listingBody is the body of a listing's create.
type listingBody = platformsim.ListingContent

type listingAnswer struct {
	ExternalListingID string `json:"external_listing_id"`
}

type catalogBody struct {
	Platform       string `json:"platform"`
	ExternalShopID string `json:"external_shop_id"`
}

type catalogListing struct {
	ExternalID string `json:"external_id"`
	Title      string `json:"title"`
	PriceMinor int64  `json:"price_minor"`
	Currency   string `json:"currency"`
}

type catalogAnswer struct {
	Listings []catalogListing `json:"listings"`
}

type generateBody struct {
	Kind         model.AIKind `json:"kind"`
	Title        string       `json:"title"`
	Description  string       `json:"description"`
	Instructions string       `json:"instructions"`
}

type generateAnswer struct {
	Text             string `json:"text,omitempty"`
	Category         string `json:"category,omitempty"`
	Image            []byte `json:"image,omitempty"`
	ImageContentType string `json:"image_content_type,omitempty"`
	Units            int64  `json:"units"`
}

type fetchBody struct {
	URL string `json:"url"`
}

type fetchAnswer struct {
	ContentType string `json:"content_type"`
	Data        []byte `json:"data"`
}

// problem is an error answer. Message is safe to show users: the
// simulators never repeat credentials or URL queries in it.
type problem struct {
	Code       domain.Code `json:"code"`
	Message    string      `json:"message"`
	ResourceID string      `json:"resource_id,omitempty"`
}

// simulatedStatus is the HTTP status of each error code, as a real API
// would answer; any other code is a 500.
var simulatedStatus = map[domain.Code]int{
	domain.CodeValidation:  http.StatusUnprocessableEntity,
	domain.CodeForbidden:   http.StatusForbidden,
	domain.CodeNotFound:    http.StatusNotFound,
	domain.CodeConflict:    http.StatusConflict,
	domain.CodeRateLimited: http.StatusTooManyRequests,
	domain.CodeUnavailable: http.StatusServiceUnavailable,
}

// statusOf is the HTTP status of an error code.
func statusOf(code domain.Code) int {
	if s, ok := simulatedStatus[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// retryAfterSeconds is a wait as a Retry-After header says it: whole
// seconds, rounded up, at least 1 (0 would invite an immediate retry that
// the bucket refuses again).
func retryAfterSeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}
