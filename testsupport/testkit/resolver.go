package testkit

import (
	"context"
	"net/netip"
	"sync"

	"github.com/oncehq/once/ports"
)

// Resolver is a ports.HostResolver answering from a table, so tests decide
// what a host name resolves to (a rebinding, a private answer) without DNS.
// A name not in the table does not exist. Safe for concurrent use.
type Resolver struct {
	mu      sync.Mutex
	addrs   map[string][]netip.Addr
	fails   map[string]error
	lookups []string
}

var _ ports.HostResolver = (*Resolver)(nil)

// NewResolver returns a resolver that knows no names.
func NewResolver() *Resolver {
	return &Resolver{addrs: map[string][]netip.Addr{}, fails: map[string]error{}}
}

// Set makes host resolve to addrs (literal addresses; a bad one panics).
func (r *Resolver) Set(host string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	parsed := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		parsed[i] = netip.MustParseAddr(a)
	}
	r.addrs[host] = parsed
	delete(r.fails, host)
}

// Fail makes every lookup of host return err.
func (r *Resolver) Fail(host string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fails[host] = err
}

// LookupHost answers from the table and records the question.
func (r *Resolver) LookupHost(_ context.Context, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups = append(r.lookups, host)
	if err := r.fails[host]; err != nil {
		return nil, err
	}
	return r.addrs[host], nil
}

// Lookups returns the hosts looked up so far, in order.
func (r *Resolver) Lookups() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lookups...)
}
