package ports

import (
	"context"

	"github.com/oncehq/once/domain"
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
	// CreateListing creates a listing once per request token: a repeated
	// token returns the first listing and creates nothing.
	CreateListing(ctx context.Context, req CreateListingRequest) (CreateListingResult, error)
	// FetchCatalog returns every listing of the shop.
	FetchCatalog(ctx context.Context, req FetchCatalogRequest) ([]CatalogListing, error)
}

// VerifyCredentialsRequest is one verification call.
type VerifyCredentialsRequest struct {
	RequestToken   string
	Platform       string
	ExternalShopID string
	Credentials    domain.StoreCredentials
}

// VerifyCredentialsResult is the platform's verdict. Reason is safe to show
// to users: it never repeats the credentials.
type VerifyCredentialsResult struct {
	Valid  bool
	Reason string
}

// MessageHandler processes one delivered message. Delivery is at-least-once:
// a handler must be re-entrant, so a duplicate has no second effect. An
// error means "not done": the message is delivered again, and after the
// retries the worker gives up on the job (JobFailures); domain.CodeValidation
// and other permanent codes may be given up on at once.
type MessageHandler interface {
	Handle(ctx context.Context, msg Message) error
}

// MessageHandlerFunc adapts a function to MessageHandler.
type MessageHandlerFunc func(ctx context.Context, msg Message) error

func (f MessageHandlerFunc) Handle(ctx context.Context, msg Message) error { return f(ctx, msg) }
