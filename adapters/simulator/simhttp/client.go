package simhttp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
)

// DefaultTimeout bounds one call when ClientConfig.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// maxAnswer bounds the answers the client reads (generated images and
// material files included).
const maxAnswer = 32 << 20

// ClientConfig configures a Client.
type ClientConfig struct {
	// URL is where the simulated systems are served (`once sim`), e.g.
	// http://127.0.0.1:8090.
	URL string
	// Timeout bounds each call, answer included; DefaultTimeout if zero.
	Timeout time.Duration
	// IdleConns is how many connections are kept open between calls:
	// as many as the calls its user may have out at once (a worker's
	// ONCE_WORK_CONCURRENCY). Each call past them dials a connection of
	// its own and closes it after, a socket in TIME_WAIT a call.
	// DefaultIdleConns if zero; ignored with Transport.
	IdleConns int
	// Transport replaces http.DefaultTransport's clone (tests).
	Transport http.RoundTripper
}

// DefaultIdleConns is IdleConns for a client whose user has few calls out
// at once.
const DefaultIdleConns = 16

// Client is the platform, the AI provider and the material source over
// HTTP. Each call is one attempt: the workers retry, with the same request
// token, which the server honours as an idempotency key. Errors are
// *domain.Error:
//
//   - *platformerr.Throttled for a 429 (RetryAfter from Retry-After, Scope
//     from X-RateLimit-Scope: the shop's quota or the application's): the
//     system did not act and asks to wait; it is CodeUnavailable too;
//   - CodeUnavailable (transient: retry) when the call may not have
//     reached the system or its answer was lost: a connection refused or
//     cut, a timeout, a 5xx or 408 (RetryAfter from Retry-After), an
//     answer that cannot be read;
//   - the system's own permanent code (CodeValidation, CodeForbidden,
//     CodeNotFound, CodeConflict with ResourceID) for any other 4xx.
//
// Messages (what users may see) are the system's client-safe message,
// sanitized, or a fixed text: never the credentials, a material URL or the
// server's address. Causes kept for the logs never hold the request URL.
type Client struct {
	base string
	http *http.Client
}

var (
	_ ports.PlatformGateway = (*Client)(nil)
	_ ports.AIProvider      = (*Client)(nil)
	_ ports.MaterialSource  = (*Client)(nil)
)

// NewClient checks cfg and builds a Client.
func NewClient(cfg ClientConfig) (*Client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("the simulator URL must be http(s)://host[:port]")
	}
	if cfg.Timeout < 0 {
		return nil, errors.New("the simulator timeout cannot be negative")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.IdleConns < 0 {
		return nil, errors.New("the simulator's idle connections cannot be negative")
	}
	transport := cfg.Transport
	if transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns = cmp.Or(cfg.IdleConns, DefaultIdleConns)
		t.MaxIdleConnsPerHost = t.MaxIdleConns
		transport = t
	}
	return &Client{
		base: strings.TrimRight(u.String(), "/"),
		http: &http.Client{Transport: transport, Timeout: cfg.Timeout},
	}, nil
}

// VerifyCredentials implements ports.PlatformGateway.
func (c *Client) VerifyCredentials(ctx context.Context, req ports.VerifyCredentialsRequest) (ports.VerifyCredentialsResult, error) {
	var a verifyAnswer
	err := c.call(ctx, "platform", PathVerify, callInfo{token: req.RequestToken, creds: req.Credentials},
		verifyBody{Platform: req.Platform, ExternalShopID: req.ExternalShopID}, &a)
	return ports.VerifyCredentialsResult{Valid: a.Valid, Reason: a.Reason}, err
}

// CreateListing implements ports.PlatformGateway.
func (c *Client) CreateListing(ctx context.Context, req ports.CreateListingRequest) (ports.CreateListingResult, error) {
	var a listingAnswer
	err := c.call(ctx, "platform", PathListings, callInfo{token: req.RequestToken, creds: req.Credentials}, listingBody{
		Platform: req.Platform, ExternalShopID: req.ExternalShopID, SKU: req.SKU, Title: req.Title,
		Description: req.Description, PriceMinor: req.PriceMinor, Currency: req.Currency,
	}, &a)
	return ports.CreateListingResult{ExternalListingID: a.ExternalListingID}, err
}

// FetchCatalog implements ports.PlatformGateway.
func (c *Client) FetchCatalog(ctx context.Context, req ports.FetchCatalogRequest) ([]ports.CatalogListing, error) {
	var a catalogAnswer
	if err := c.call(ctx, "platform", PathCatalog, callInfo{creds: req.Credentials},
		catalogBody{Platform: req.Platform, ExternalShopID: req.ExternalShopID}, &a); err != nil {
		return nil, err
	}
	out := make([]ports.CatalogListing, 0, len(a.Listings))
	for _, l := range a.Listings {
		out = append(out, ports.CatalogListing(l))
	}
	return out, nil
}

// Generate implements ports.AIProvider.
func (c *Client) Generate(ctx context.Context, req ports.AIRequest) (ports.AIResult, error) {
	var a generateAnswer
	if err := c.call(ctx, "AI provider", PathGenerate, callInfo{token: req.RequestToken}, generateBody{
		Kind: req.Kind, Title: req.Title, Description: req.Description, Instructions: req.Instructions,
	}, &a); err != nil {
		return ports.AIResult{}, err
	}
	return ports.AIResult(a), nil
}

// Fetch implements ports.MaterialSource. The URL travels in the body, so
// it is in no request line, log or error of ours.
func (c *Client) Fetch(ctx context.Context, rawURL string) ([]byte, string, error) {
	var a fetchAnswer
	if err := c.call(ctx, "material source", PathFetch, callInfo{}, fetchBody{URL: rawURL}, &a); err != nil {
		return nil, "", err
	}
	return a.Data, a.ContentType, nil
}

// call posts body to path and decodes a 2xx answer into answer; see
// Client for the errors.
func (c *Client) call(ctx context.Context, system, path string, info callInfo, body, answer any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return domain.Wrap(domain.CodeInternal, err, "cannot encode the "+system+" request")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(raw))
	if err != nil {
		return domain.Wrap(domain.CodeInternal, err, "cannot build the "+system+" request")
	}
	req.Header.Set("Content-Type", "application/json")
	if info.token != "" {
		req.Header.Set(HeaderIdempotencyKey, info.token)
	}
	if key := domain.OrderingKeyOf(ctx); key != "" {
		req.Header.Set(HeaderOrderingKey, key)
	}
	if info.creds != (model.StoreCredentials{}) {
		req.Header.Set(HeaderAPIKey, info.creds.APIKey)
		req.Header.Set(HeaderAPISecret, info.creds.APISecret)
	}

	res, err := c.http.Do(req)
	if err != nil {
		return domain.Wrap(domain.CodeUnavailable, transportCause(err), "the "+system+" did not answer")
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer+1))
	switch {
	case err != nil:
		return domain.Wrap(domain.CodeUnavailable, transportCause(err), "the "+system+" answer was cut off")
	case len(data) > maxAnswer:
		return domain.Errorf(domain.CodeUnavailable, "the %s answer is too large", system)
	case res.StatusCode >= 200 && res.StatusCode < 300:
		if err := json.Unmarshal(data, answer); err != nil {
			// The system may have acted: transient, so the retry (same
			// token) gets its first outcome.
			return domain.Wrap(domain.CodeUnavailable, err, "the "+system+" answer cannot be read")
		}
		return nil
	default:
		return classify(system, res, data)
	}
}

// classify turns an error answer into a domain error: throttled for 429,
// transient for 5xx and 408, the system's permanent code otherwise.
func classify(system string, res *http.Response, data []byte) error {
	var p problem
	_ = json.Unmarshal(data, &p) // a body that is not a problem leaves p empty
	message := domain.SanitizeText(p.Message)
	if message == "" {
		message = fmt.Sprintf("the %s answered %d", system, res.StatusCode)
	}
	status := res.StatusCode
	switch {
	case status == http.StatusTooManyRequests:
		wait := retryAfter(res.Header)
		scope := platformerr.ScopeAccount
		if res.Header.Get(HeaderRateLimitScope) == RateLimitScopeApplication {
			scope = platformerr.ScopeApplication
		}
		return &platformerr.Throttled{RetryAfter: wait, Scope: scope, Cause: &domain.Error{Code: domain.CodeUnavailable, Message: message, RetryAfter: wait}}
	case status >= 500 || status == http.StatusRequestTimeout:
		return &domain.Error{Code: domain.CodeUnavailable, Message: message, RetryAfter: retryAfter(res.Header)}
	}
	return &domain.Error{Code: permanentCode(status, p.Code), Message: message, ResourceID: p.ResourceID}
}

// permanentCode is the code of a 4xx answer: the one the system named if
// it is a permanent one we know, else the one its status means.
func permanentCode(status int, named domain.Code) domain.Code {
	switch named {
	case domain.CodeValidation, domain.CodeForbidden, domain.CodeNotFound, domain.CodeConflict:
		return named
	}
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return domain.CodeForbidden
	case http.StatusNotFound, http.StatusGone:
		return domain.CodeNotFound
	case http.StatusConflict:
		return domain.CodeConflict
	default:
		return domain.CodeValidation
	}
}

func retryAfter(h http.Header) time.Duration {
	secs, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || secs < 0 {
		return 0
	}
	return time.Duration(secs) * time.Second
}

// transportCause drops the request URL from a transport error (it names
// the server and may carry userinfo), keeping what went wrong (refused,
// reset, timeout) for the logs.
func transportCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
