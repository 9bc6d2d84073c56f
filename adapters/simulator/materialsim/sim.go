// Package materialsim simulates the supplier sites and marketplaces behind
// ports.MaterialSource faithfully enough to test resumable transfers: it
// serves the same bytes for the same URL every time, counts every fetch per
// URL, fails on demand (per URL, a number of times), and knows a host where
// nothing exists.
package materialsim

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/oncehq/once/adapters/simulator/simcore"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

var _ ports.MaterialSource = (*Sim)(nil)

// MissingHost is the host where every file is missing: a URL whose host is
// MissingHost or a subdomain of it (https://missing/a.png,
// https://cdn.missing/a.png) answers CodeNotFound.
const MissingHost = "missing"

// ContentType is the type of every file the Sim serves.
const ContentType = "image/png"

// Option configures a Sim.
type Option func(*Sim)

// WithLatency makes every fetch take d (or until its context ends).
func WithLatency(d time.Duration) Option { return func(s *Sim) { s.faults.SetLatency(d) } }

// Sim is a simulated material source. It is safe for concurrent use.
type Sim struct {
	// faults take the latency; failures are injected per URL (fail).
	faults  *simcore.Faults
	fetches simcore.Tally

	mu   sync.Mutex
	fail map[string]injected
}

type injected struct {
	n   int
	err error
}

// New returns a Sim without latency or injected failures.
func New(opts ...Option) *Sim {
	s := &Sim{faults: simcore.NewFaults("source", "fetch"), fail: map[string]injected{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// FailNext makes the next n fetches of rawURL fail with err (a
// CodeUnavailable outage if err is nil). A later call replaces what is left
// of an earlier one for the same URL.
func (s *Sim) FailNext(rawURL string, n int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		err = domain.Errorf(domain.CodeUnavailable, "simulated source outage")
	}
	s.fail[rawURL] = injected{n: n, err: err}
}

// Fetch returns Content(rawURL) as image/png. Every call is counted, failed
// or not.
//
// Errors: CodeValidation for a URL that is not http(s) with a host,
// CodeNotFound under MissingHost, the injected error for FailNext, and
// CodeUnavailable for a context that ended while waiting. No error repeats
// the URL's query (it may be signed), nor its userinfo.
func (s *Sim) Fetch(ctx context.Context, rawURL string) ([]byte, string, error) {
	s.fetches.Add(rawURL)
	if err := s.faults.Wait(ctx); err != nil {
		return nil, "", err
	}
	if err := s.faults.Abandoned(ctx); err != nil {
		return nil, "", err
	}
	if err := s.injected(rawURL); err != nil {
		return nil, "", err
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		// Not even the parse error: it quotes the URL.
		return nil, "", domain.Errorf(domain.CodeValidation, "the source URL is not an http(s) URL")
	}
	if host := strings.ToLower(u.Hostname()); host == MissingHost || strings.HasSuffix(host, "."+MissingHost) {
		return nil, "", domain.Errorf(domain.CodeNotFound, "no file at %s", Redact(u))
	}
	return Content(rawURL), ContentType, nil
}

func (s *Sim) injected(rawURL string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.fail[rawURL]
	if !ok || f.n <= 0 {
		return nil
	}
	f.n--
	s.fail[rawURL] = f
	return f.err
}

// Fetches returns how many times rawURL was fetched, failures included.
func (s *Sim) Fetches(rawURL string) int { return s.fetches.Of(rawURL) }

// FetchCount returns the fetches of every URL.
func (s *Sim) FetchCount() int { return s.fetches.Total() }

// Redact returns u as scheme://host/path: without userinfo, query or
// fragment, which may carry credentials or signatures.
func Redact(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}
