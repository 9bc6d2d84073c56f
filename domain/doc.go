// Package domain is the kernel every other package of the domain shares:
// the error type with its stable codes, error and text sanitizing, and the
// trace and log context carried from a request to its job. The entities and
// value types are in domain/model; the use cases in the packages beside it
// (domain/stores, domain/idempotency, domain/dispatch, ...). It imports
// nothing of ours.
package domain
