// Package platformerr sorts the errors an outside call returns (a shop
// platform, the AI provider, a material source) for the workers that make
// such calls: whether the message should be delivered again, and what a
// permanent failure tells the user.
package platformerr

import (
	"context"
	"errors"

	"github.com/oncehq/once/domain"
)

// Retryable reports whether err says nothing about the request itself: a
// transport failure or timeout (CodeUnavailable), or our own context ending.
// The worker returns such an error so the message is delivered again; any
// other error is the callee's permanent answer.
func Retryable(ctx context.Context, err error) bool {
	return ctx.Err() != nil ||
		domain.IsCode(err, domain.CodeUnavailable) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Canceled)
}

// Reason is the user-facing reason for a permanent platform error: base,
// followed by the client-safe message of a domain error (never its cause),
// sanitized and bounded.
func Reason(base string, err error) string {
	var de *domain.Error
	if errors.As(err, &de) && de.Message != "" {
		return domain.SanitizeText(base + ": " + de.Message)
	}
	return domain.SanitizeText(base)
}
