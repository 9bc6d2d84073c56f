// Package netguard is where the service reaches out to URLs users named
// (material sources today): a resolver for the request-time check, and a
// dialer and HTTP client that refuse, at connect time, every address the
// fetch policy (domain/fetchpolicy) does not allow.
//
// The connect-time check runs in net.Dialer.Control, on the address about to
// be connected after the dialler's own DNS resolution, so a host whose
// answer changes between the request-time check and the fetch (DNS
// rebinding), or a redirect to an internal address, is refused all the same.
//
// Any adapter that fetches a user-supplied URL (a real MaterialSource, a
// webhook sender) must do it through NewHTTPClient, or at least dial through
// Dialer.DialContext with no proxy: the request-time check alone does not
// protect against rebinding. The shipped MaterialSource is a simulator that
// makes no connections, so nothing dials through this package yet.
package netguard
