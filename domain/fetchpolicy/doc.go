// Package fetchpolicy decides which URLs and network addresses the service
// may fetch from on a user's behalf: http and https only, no credentials in
// the URL, and public addresses only (no loopback, private, link-local, cloud
// metadata, shared, multicast, reserved or documentation ranges, in IPv4,
// IPv6 or IPv4-mapped IPv6 form), unless an operator allows a range or a host
// (ONCE_FETCH_ALLOW_CIDRS, ONCE_FETCH_ALLOW_HOSTS).
//
// The policy is applied twice, so that a server-side request forgery needs
// to get past both:
//
//   - when a request names a URL (domain/materials): the URL's form, a
//     literal address, and every address its host resolves to right now;
//   - when a fetcher connects (adapters/netguard): the address actually
//     dialled, after the fetcher's own DNS resolution, so an answer that
//     changes in between (DNS rebinding) cannot reach a private address.
//
// The package speaks net/netip and net/url only; resolving and dialling are
// the adapters' business.
package fetchpolicy
