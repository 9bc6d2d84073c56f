package simhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/oncehq/once/adapters/simulator/simcore"
)

// Admin reads the ledger and the read-outs of a running simulator and
// steers its faults and its platforms' settings.
type Admin struct {
	base string
	http *http.Client
}

// NewAdmin returns an Admin of the simulator at baseURL.
func NewAdmin(baseURL string) *Admin {
	return &Admin{base: strings.TrimRight(baseURL, "/"), http: &http.Client{Timeout: DefaultTimeout}}
}

// Ledger returns the entries f selects, in order.
func (a *Admin) Ledger(ctx context.Context, f Filter) ([]Entry, error) {
	q := url.Values{}
	for k, v := range map[string]string{"kind": string(f.Kind), "token": f.Token, "subject": f.Subject} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.EffectsOnly {
		q.Set("effects", "true")
	}
	var out ledgerAnswer
	err := a.do(ctx, http.MethodGet, PathLedger+"?"+q.Encode(), nil, &out)
	return out.Entries, err
}

// Inject adds a fault.
func (a *Admin) Inject(ctx context.Context, f Fault) error {
	return a.do(ctx, http.MethodPost, PathFaults, f, nil)
}

// ClearFaults drops the faults no call has used yet.
func (a *Admin) ClearFaults(ctx context.Context) error {
	return a.do(ctx, http.MethodDelete, PathFaults, nil, nil)
}

// Held lists the calls held open, oldest first.
func (a *Admin) Held(ctx context.Context) ([]HeldCall, error) {
	var out heldAnswer
	err := a.do(ctx, http.MethodGet, PathHeld, nil, &out)
	return out.Held, err
}

// Release lets every held call go on and says how many there were.
func (a *Admin) Release(ctx context.Context) (int, error) {
	var out releaseAnswer
	err := a.do(ctx, http.MethodPost, PathRelease, nil, &out)
	return out.Released, err
}

// SetPlatformLatency makes every call of platform take d, instead of the
// server's latency.
func (a *Admin) SetPlatformLatency(ctx context.Context, platform string, d time.Duration) error {
	return a.do(ctx, http.MethodPut, platformPath(platform, "latency"), latencySetting{LatencyMS: d.Milliseconds()}, nil)
}

// ClearPlatformLatency gives platform the server's latency again.
func (a *Admin) ClearPlatformLatency(ctx context.Context, platform string) error {
	return a.do(ctx, http.MethodDelete, platformPath(platform, "latency"), nil, nil)
}

// TakeDown makes every call of platform answer 503 without acting, until
// BringUp.
func (a *Admin) TakeDown(ctx context.Context, platform string) error {
	return a.do(ctx, http.MethodPut, platformPath(platform, "outage"), nil, nil)
}

// BringUp ends platform's outage, the scheduled ones included.
func (a *Admin) BringUp(ctx context.Context, platform string) error {
	return a.do(ctx, http.MethodDelete, platformPath(platform, "outage"), nil, nil)
}

// SetBucket meters platform's calls with a leaky bucket of size, per shop
// or for the whole platform (scope); the buckets start empty.
func (a *Admin) SetBucket(ctx context.Context, platform string, scope BucketScope, size simcore.BucketSize) error {
	return a.do(ctx, http.MethodPut, platformPath(platform, "buckets/"+string(scope)), size, nil)
}

// ClearBucket stops metering platform's calls in scope.
func (a *Admin) ClearBucket(ctx context.Context, platform string, scope BucketScope) error {
	return a.do(ctx, http.MethodDelete, platformPath(platform, "buckets/"+string(scope)), nil, nil)
}

// Throttles counts the calls answered 429, per platform and per shop.
func (a *Admin) Throttles(ctx context.Context) (Throttles, error) {
	var out Throttles
	err := a.do(ctx, http.MethodGet, PathThrottles, nil, &out)
	return out, err
}

// InFlight reads the most platform calls seen in flight per shop and
// ordering key, and the calls of keys (InFlightShop, InFlightOrdering).
func (a *Admin) InFlight(ctx context.Context, keys ...string) (InFlight, error) {
	var out InFlight
	err := a.do(ctx, http.MethodGet, PathConcurrency+"?"+url.Values{"key": keys}.Encode(), nil, &out)
	return out, err
}

// PlatformEffects reads the ledger's platform effects by time, per
// platform and per shop.
func (a *Admin) PlatformEffects(ctx context.Context) (PlatformEffects, error) {
	var out PlatformEffects
	err := a.do(ctx, http.MethodGet, PathEffects, nil, &out)
	return out, err
}

// ResetCounters forgets the throttle counts and the concurrency read-out
// (a bench's warm-up is not its measure); the ledger and the buckets'
// levels stay.
func (a *Admin) ResetCounters(ctx context.Context) error {
	return a.do(ctx, http.MethodDelete, PathCounters, nil, nil)
}

func platformPath(platform, setting string) string {
	return PathPlatforms + "/" + url.PathEscape(platform) + "/" + setting
}

func (a *Admin) do(ctx context.Context, method, path string, body, answer any) error {
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("simulator %s %s: %w", method, path, transportCause(err))
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		var p problem
		_ = json.Unmarshal(data, &p)
		return fmt.Errorf("simulator %s %s: %d %s", method, path, res.StatusCode, p.Message)
	}
	if answer == nil {
		return nil
	}
	return json.Unmarshal(data, answer)
}
