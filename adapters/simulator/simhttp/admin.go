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
)

// Admin reads the ledger of a running simulator and steers its faults.
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
