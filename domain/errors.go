package domain

import (
	"errors"
	"fmt"
	"time"
)

// Code is a stable, machine-readable error code. Clients branch on it; it
// reaches them as the `code` member of an RFC 9457 problem document. Codes are
// never renamed once published.
type Code string

const (
	CodeValidation            Code = "VALIDATION_FAILED"
	CodeUnauthenticated       Code = "UNAUTHENTICATED"
	CodeTokenRevoked          Code = "TOKEN_REVOKED"
	CodeForbidden             Code = "FORBIDDEN"
	CodeInsufficientScope     Code = "INSUFFICIENT_SCOPE"
	CodeNotFound              Code = "NOT_FOUND"
	CodeReferenceNotFound     Code = "REFERENCE_NOT_FOUND"
	CodeMethodNotAllowed      Code = "METHOD_NOT_ALLOWED"
	CodeConflict              Code = "CONFLICT"
	CodeStoreExists           Code = "STORE_ALREADY_EXISTS"
	CodeWebhookEndpointExists Code = "WEBHOOK_ENDPOINT_EXISTS"
	CodeLimitReached          Code = "LIMIT_REACHED"
	CodePreconditionFailed    Code = "PRECONDITION_FAILED"
	CodePreconditionRequired  Code = "PRECONDITION_REQUIRED"
	CodeInvalidState          Code = "INVALID_STATE"
	CodeOperationFinished     Code = "OPERATION_FINISHED"
	CodeUploadMismatch        Code = "UPLOAD_MISMATCH"
	CodeBodyTooLarge          Code = "REQUEST_BODY_TOO_LARGE"
	CodeUnsupportedMediaType  Code = "UNSUPPORTED_MEDIA_TYPE"
	CodeRequestTimeout        Code = "REQUEST_TIMEOUT"
	CodeIdempotencyKeyMissing Code = "IDEMPOTENCY_KEY_MISSING"
	CodeIdempotencyKeyInvalid Code = "IDEMPOTENCY_KEY_INVALID"
	CodeIdempotencyKeyReused  Code = "IDEMPOTENCY_KEY_REUSED"
	CodeIdempotencyInProgress Code = "IDEMPOTENCY_REQUEST_IN_PROGRESS"
	CodeRateLimited           Code = "RATE_LIMITED"
	CodeTooManyWaiters        Code = "TOO_MANY_WAITERS"
	CodeUnsafePayload         Code = "UNSAFE_PAYLOAD"
	CodeUnavailable           Code = "UNAVAILABLE"
	CodeInternal              Code = "INTERNAL"
)

// RetrySameKey says whether sending the same request again with the same
// Idempotency-Key can succeed. It is false where the request itself must
// change (bad input, a key reused for another request) and true where the
// failure was transient and nothing was committed: a twin still running, a
// body that did not arrive in time, a dependency that is down, a workspace
// over its limits.
func (c Code) RetrySameKey() bool {
	switch c {
	case CodeIdempotencyInProgress, CodeRequestTimeout, CodeRateLimited, CodeTooManyWaiters, CodeUnavailable, CodeInternal:
		return true
	default:
		return false
	}
}

// Error is the one error type of the domain. Adapters translate their own
// failures into it; the HTTP adapter maps Code to a status in one table.
type Error struct {
	Code    Code
	Message string
	// RetryAfter, when set, tells the client how long to wait before retrying.
	RetryAfter time.Duration
	// Err is the underlying cause. It is logged, never shown to clients.
	Err error
	// ResourceID names the resource a conflict is about (the active sync, the
	// existing publication), when there is one; clients may act on it.
	ResourceID string
	// Field names the input a validation error is about, in the terms of the
	// request body ("source_urls[1]"), when it is one field.
	Field string
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error with a formatted client-safe message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap builds an *Error that keeps cause for logs.
func Wrap(code Code, cause error, message string) *Error {
	return &Error{Code: code, Message: message, Err: cause}
}

// ErrorCode returns the code of err, CodeInternal for errors that are not
// domain errors, and "" for nil.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var de *Error
	if errors.As(err, &de) {
		return de.Code
	}
	return CodeInternal
}

// IsCode reports whether err carries code.
func IsCode(err error, code Code) bool { return err != nil && ErrorCode(err) == code }
