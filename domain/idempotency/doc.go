// Package idempotency holds the pure rules of idempotent writes: parsing the
// Idempotency-Key header, normalizing the path and query that scope a key,
// canonicalizing the body, and fingerprinting a request with a keyed HMAC so
// that a retry can be told apart from a different request that reuses a key.
//
// Nothing here touches storage or the network; the service that applies these
// rules inside a business transaction lives beside it.
package idempotency
