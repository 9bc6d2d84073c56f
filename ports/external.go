package ports

import (
	"context"
	"time"

	"github.com/oncehq/once/domain/model"
)

// PlatformGateway is the marketplace platforms (Shopify, Amazon, …). Every
// call that has a side effect takes a request token: the platform (or our
// adapter in front of it) executes a token once and answers a repeated token
// with the first outcome, so a redelivered job cannot act twice.
type PlatformGateway interface {
	// VerifyCredentials asks the platform whether creds give access to the
	// shop. A rejected credential is a result (Valid false, Reason set), not
	// an error; errors are transport failures worth retrying
	// (domain.CodeUnavailable) or permanent ones (other codes).
	VerifyCredentials(ctx context.Context, req VerifyCredentialsRequest) (VerifyCredentialsResult, error)
	// CreateListing puts the shop's listing of req.SKU once per request
	// token: the first token of a SKU creates the listing, a later one
	// replaces its content and names the same listing (as SP-API's
	// putListingsItem does by seller SKU); a repeated token returns the
	// listing it acted on and changes nothing.
	CreateListing(ctx context.Context, req CreateListingRequest) (CreateListingResult, error)
	// FetchCatalog returns every listing of the shop.
	FetchCatalog(ctx context.Context, req FetchCatalogRequest) ([]CatalogListing, error)
}

// VerifyCredentialsRequest is one verification call.
type VerifyCredentialsRequest struct {
	RequestToken   string
	Platform       string
	ExternalShopID string
	Credentials    model.StoreCredentials
}

// VerifyCredentialsResult is the platform's verdict. Reason is safe to show
// to users: it never repeats the credentials.
type VerifyCredentialsResult struct {
	Valid  bool
	Reason string
}

// ObjectStore is our own object storage (S3-like). Keys are internal and
// never leave the service.
type ObjectStore interface {
	// Put stores data under key, replacing what is there (client uploads,
	// which may be retried with other bytes before completion).
	Put(ctx context.Context, key string, data []byte, contentType string) error
	// PutIfAbsent stores data under key unless an object is already there,
	// and says whether it wrote. Workers write derived and transferred
	// objects with it under deterministic keys, so a redelivered job never
	// makes a second object.
	PutIfAbsent(ctx context.Context, key string, data []byte, contentType string) (created bool, err error)
	// Get returns the object; domain.CodeNotFound if there is none.
	Get(ctx context.Context, key string) ([]byte, ObjectInfo, error)
	// Stat describes the object; domain.CodeNotFound if there is none.
	Stat(ctx context.Context, key string) (ObjectInfo, error)
	// Delete removes the object. Deleting an absent object is no error,
	// so a clean-up interrupted halfway can run again.
	Delete(ctx context.Context, key string) error
}

// ObjectPresigner is an ObjectStore that can sign requests clients send to
// it themselves, so the bytes of an upload or a download never pass
// through the service. A signed URL is a bearer credential until it
// expires: it is handed to the one client that asked and never stored,
// logged or put in an error. Stores that cannot sign (memory, local) do
// not implement it, and uploads and downloads go through the API.
type ObjectPresigner interface {
	// PresignPut signs an upload of exactly want's content to key: the
	// client must send the returned headers, and the store refuses content
	// whose type or SHA-256 is not want's. want.SHA256 is hex.
	// domain.CodeValidation for an invalid key or digest.
	PresignPut(ctx context.Context, key string, want ObjectInfo, ttl time.Duration) (SignedRequest, error)
	// PresignGet signs a download of key. It does not check that the
	// object exists. domain.CodeValidation for an invalid key.
	PresignGet(ctx context.Context, key string, ttl time.Duration) (SignedRequest, error)
}

// SignedRequest is a request a client may send to the object store until
// ExpiresAt, with Headers exactly as given.
type SignedRequest struct {
	Method    string
	URL       string
	Headers   map[string]string
	ExpiresAt time.Time
}

// ObjectInfo describes a stored object.
type ObjectInfo struct {
	Key         string
	Size        int64
	ContentType string
	// SHA256 is the hex digest of the content; empty from a Stat of an
	// object the store keeps no digest of.
	SHA256 string
}

// MaterialSource fetches collected material from where the collector found
// it (supplier sites, marketplaces).
type MaterialSource interface {
	// Fetch downloads the file at url. domain.CodeUnavailable for transient
	// failures (retry), domain.CodeNotFound or CodeValidation for permanent
	// ones. Errors never repeat the URL's query (it may be signed).
	Fetch(ctx context.Context, url string) (data []byte, contentType string, err error)
}

// AIProvider generates product text, categories and images. Every call is
// billed by the provider, so every call carries a request token: the
// provider executes (and charges) a token once and answers a repeated token
// with the first result.
type AIProvider interface {
	// Generate runs one request. domain.CodeUnavailable for transient
	// failures; other codes are permanent.
	Generate(ctx context.Context, req AIRequest) (AIResult, error)
}

// AIRequest is one generation.
type AIRequest struct {
	RequestToken string
	Kind         model.AIKind
	Title        string
	Description  string
	Instructions string
}

// AIResult is what the provider produced and what it charged.
type AIResult struct {
	Text             string
	Category         string
	Image            []byte
	ImageContentType string
	Units            int64
}

// CreateListingRequest creates a listing on a platform. RequestToken is the
// publish job's (domain/model/request_token.go): the platform creates at
// most one listing per token.
type CreateListingRequest struct {
	RequestToken   string
	Platform       string
	ExternalShopID string
	// SKU is the seller's id of the item in the shop (our product's id):
	// the shop holds one listing per SKU.
	SKU         string
	Credentials model.StoreCredentials
	Title       string
	Description string
	PriceMinor  int64
	Currency    string
}

// CreateListingResult names the listing on the platform.
type CreateListingResult struct {
	ExternalListingID string
}

// FetchCatalogRequest reads a shop's listings. Reading has no side effect,
// so it needs no token.
type FetchCatalogRequest struct {
	Platform       string
	ExternalShopID string
	Credentials    model.StoreCredentials
}

// CatalogListing is one listing as the platform reports it.
type CatalogListing struct {
	ExternalID string
	Title      string
	PriceMinor int64
	Currency   string
}
