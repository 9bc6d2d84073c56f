package netguard

import (
	"fmt"
	"net/http"
	"time"

	"github.com/oncehq/once/domain/fetchpolicy"
)

// maxRedirects bounds how far a fetch follows redirects.
const maxRedirects = 5

// NewHTTPClient returns the HTTP client for fetching user-supplied URLs:
// every connection through Dialer (no proxy, which would dial for us past
// the guard), every redirect target checked against the policy, at most
// maxRedirects of them, and the whole exchange bounded by timeout.
func NewHTTPClient(policy fetchpolicy.Policy, timeout time.Duration) *http.Client {
	dialer := NewDialer(policy, 10*time.Second)
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("%w: more than %d redirects", ErrForbidden, maxRedirects)
			}
			if _, err := policy.CheckURL(req.URL.String()); err != nil {
				return fmt.Errorf("%w: redirect target %v", ErrForbidden, err)
			}
			return nil
		},
	}
}
