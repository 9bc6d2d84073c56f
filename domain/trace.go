package domain

import (
	"context"
	"regexp"
)

type traceparentKey struct{}

// W3C Trace Context, version 00: version-traceid-parentid-flags, with the
// all-zero ids that the spec declares invalid refused.
var traceparentFormat = regexp.MustCompile(`^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$`)

// WithTraceparent returns ctx carrying the W3C traceparent of the request
// that started the work, so an outbox event can carry it to the worker. An
// invalid value is dropped rather than propagated.
func WithTraceparent(ctx context.Context, traceparent string) context.Context {
	if !ValidTraceparent(traceparent) {
		return ctx
	}
	return context.WithValue(ctx, traceparentKey{}, traceparent)
}

// TraceparentFrom returns the traceparent carried by ctx, or "".
func TraceparentFrom(ctx context.Context) string {
	tp, _ := ctx.Value(traceparentKey{}).(string)
	return tp
}

// ValidTraceparent reports whether s is a usable W3C traceparent.
func ValidTraceparent(s string) bool {
	if !traceparentFormat.MatchString(s) || s[:2] == "ff" {
		return false
	}
	return s[3:35] != "00000000000000000000000000000000" && s[36:52] != "0000000000000000"
}
