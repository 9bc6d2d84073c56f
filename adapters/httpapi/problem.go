package httpapi

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/limits"
)

// codeByStatus names the errors huma raises itself (parsing, validation,
// body size, content type, a body that did not arrive in time) so that every
// problem document carries a code. Any other 4xx is VALIDATION_FAILED (the
// request must change), any other status INTERNAL; see codeForStatus.
var codeByStatus = map[int]domain.Code{
	http.StatusBadRequest:            domain.CodeValidation,
	http.StatusUnprocessableEntity:   domain.CodeValidation,
	http.StatusRequestEntityTooLarge: domain.CodeBodyTooLarge,
	http.StatusUnsupportedMediaType:  domain.CodeUnsupportedMediaType,
	http.StatusRequestTimeout:        domain.CodeRequestTimeout,
	http.StatusUnauthorized:          domain.CodeUnauthenticated,
	http.StatusForbidden:             domain.CodeForbidden,
	http.StatusNotFound:              domain.CodeNotFound,
	http.StatusMethodNotAllowed:      domain.CodeMethodNotAllowed,
	http.StatusConflict:              domain.CodeConflict,
	http.StatusTooManyRequests:       domain.CodeRateLimited,
	http.StatusServiceUnavailable:    domain.CodeUnavailable,
	http.StatusPreconditionFailed:    domain.CodePreconditionFailed,
	http.StatusPreconditionRequired:  domain.CodePreconditionRequired,
}

// StatusesOf lists the statuses code is answered with: its own (errorTable)
// first, then any other status huma raises it for (codeByStatus), in
// order. VALIDATION_FAILED is 422 for a body read but wrong, and 400 for one
// that cannot be read as JSON at all.
func StatusesOf(code domain.Code) []int {
	statuses := []int{statusByCode[code]}
	var more []int
	for status, c := range codeByStatus {
		if c == code && status != statusByCode[code] {
			more = append(more, status)
		}
	}
	slices.Sort(more)
	return append(statuses, more...)
}

// Problem is an RFC 9457 problem document with a stable code.
type Problem struct {
	Type     string `json:"type,omitempty" format:"uri" doc:"A URI reference identifying the problem type" example:"https://github.com/oncehq/once/blob/main/docs/api.md#problem-idempotency_key_reused"`
	Title    string `json:"title" doc:"A short, human-readable summary of the problem type"`
	Status   int    `json:"status" doc:"The HTTP status code"`
	Detail   string `json:"detail,omitempty" doc:"A human-readable explanation of this occurrence"`
	Instance string `json:"instance,omitempty" format:"uri-reference" doc:"This occurrence: urn:once:request: followed by the request's X-Request-Id, which operators find in the logs as request_id"`
	Code     string `json:"code" doc:"Stable machine-readable error code; branch on this, not on the text" example:"IDEMPOTENCY_KEY_REUSED"`
	// RetrySameKey tells an idempotent client whether sending the same
	// request again with the same Idempotency-Key can succeed.
	RetrySameKey bool `json:"retry_same_key" doc:"Whether retrying the same request with the same Idempotency-Key can succeed"`
	// ResourceID names the resource a conflict is about.
	ResourceID string              `json:"resource_id,omitempty" format:"uuid" doc:"The resource the conflict is about: the active sync for SYNC_ALREADY_ACTIVE, the existing store for STORE_ALREADY_EXISTS"`
	Errors     []*huma.ErrorDetail `json:"errors,omitempty" doc:"Details of invalid input; location names the field (body.name, body.source_urls[1], query.kind)"`

	retryAfter time.Duration
	// refusal is the limit a 429 RATE_LIMITED exceeded, for its headers.
	refusal *limits.Refusal
}

func (p *Problem) Error() string  { return p.Code + ": " + p.Detail }
func (p *Problem) GetStatus() int { return p.Status }

// ContentType makes JSON problems application/problem+json.
func (p *Problem) ContentType(ct string) string {
	if ct == "application/json" {
		return "application/problem+json"
	}
	return ct
}

// GetHeaders adds Retry-After when the client should come back later, and
// the RateLimit headers when a limit was exceeded.
func (p *Problem) GetHeaders() http.Header {
	h := http.Header{}
	if p.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfterSeconds(p.retryAfter)))
	}
	if p.refusal != nil {
		setRateLimitHeaders(h, p.refusal)
	}
	return h
}

func init() {
	// Every error huma writes, its own included, becomes a Problem.
	huma.NewError = newProblem
}

// newProblem replaces huma.NewError. A domain error among errs decides the
// code and status; otherwise the status decides the code.
func newProblem(status int, msg string, errs ...error) huma.StatusError {
	for _, err := range errs {
		var de *domain.Error
		if errors.As(err, &de) {
			return problemFromDomain(de)
		}
	}
	code := codeForStatus(status)
	var details []*huma.ErrorDetail
	for _, err := range errs {
		if err == nil {
			continue
		}
		if d, ok := err.(huma.ErrorDetailer); ok {
			detail := *d.ErrorDetail()
			// The offending value is never echoed: it may be a credential.
			detail.Value = nil
			details = append(details, &detail)
		} else if status < 500 {
			details = append(details, &huma.ErrorDetail{Message: err.Error()})
		}
	}
	if status >= 500 {
		msg = "internal error"
	}
	return &Problem{
		Type:         ProblemType(code),
		Title:        problemTitle(status),
		Status:       status,
		Detail:       msg,
		Code:         string(code),
		RetrySameKey: code.RetrySameKey(),
		Errors:       details,
	}
}

// codeForStatus is the code of a problem huma raised with status.
func codeForStatus(status int) domain.Code {
	if code, ok := codeByStatus[status]; ok {
		return code
	}
	if status >= 400 && status < 500 {
		return domain.CodeValidation
	}
	return domain.CodeInternal
}

func problemFromDomain(de *domain.Error) *Problem {
	status, ok := statusByCode[de.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	detail := de.Message
	if status >= 500 && de.Code != domain.CodeUnavailable {
		// The message of an internal error may describe our internals.
		detail = "internal error"
	}
	var details []*huma.ErrorDetail
	if de.Field != "" && status < 500 {
		details = []*huma.ErrorDetail{{Location: "body." + de.Field, Message: de.Message}}
	}
	var refusal *limits.Refusal
	errors.As(de, &refusal)
	return &Problem{
		Type:         ProblemType(de.Code),
		Title:        problemTitle(status),
		Status:       status,
		Detail:       detail,
		Code:         string(de.Code),
		RetrySameKey: de.Code.RetrySameKey(),
		ResourceID:   de.ResourceID,
		Errors:       details,
		retryAfter:   de.RetryAfter,
		refusal:      refusal,
	}
}
