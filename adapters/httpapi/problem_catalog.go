package httpapi

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/oncehq/once/domain"
)

// ProblemTypeBase prefixes the `type` URI of every problem: the error table
// of docs/api.md has an anchor per code, so the URI is also its
// documentation.
const ProblemTypeBase = "https://github.com/oncehq/once/blob/main/docs/api.md#problem-"

// ProblemType is the `type` URI naming code.
func ProblemType(code domain.Code) string {
	return ProblemTypeBase + strings.ToLower(string(code))
}

// problemMeaning says, per code, what happened and what a client does about
// it. Every code in statusByCode needs a line (a test checks); the error
// table of docs/api.md is generated from this (`once errors --markdown`).
var problemMeaning = map[domain.Code]string{
	domain.CodeIdempotencyKeyMissing: "The operation needs an `Idempotency-Key` header. Generate a UUID once per logical operation.",
	domain.CodeIdempotencyKeyInvalid: "The `Idempotency-Key` is not a UUID (bare or quoted), is the nil UUID, or was sent more than once.",
	domain.CodeUnauthenticated:       "No bearer token, or it is invalid or expired. Get a new token.",
	domain.CodeForbidden:             "The token's user is not a member of the workspace, or lacks the role (admins only).",
	domain.CodeNotFound:              "No such resource in this workspace, or no such route.",
	domain.CodeConflict:              "The request conflicts with the current state of the resource.",
	domain.CodeMethodNotAllowed:      "The route exists but not with this method; `Allow` lists the methods it takes.",
	domain.CodeStoreExists:           "A store with this platform and `external_shop_id` already exists; `resource_id` names it.",
	domain.CodeSyncAlreadyActive:     "The store already has a catalog sync queued or running; `resource_id` names it. Poll it instead.",
	domain.CodeAlreadyPublished:      "The product already has a live publication on this store; `resource_id` names it.",
	domain.CodeInvalidState:          "The resource is not in a state that allows this, e.g. completing an upload whose bytes never arrived.",
	domain.CodeIdempotencyKeyReused:  "The key was used before with a different request (body, path, query or headers). Use a new key for a new request.",
	domain.CodeIdempotencyInProgress: "The first request with this key is still executing. Retry the same request with the same key after `Retry-After` seconds.",
	domain.CodeRateLimited:           "The workspace is over one of its limits: its rate of writes, or the requests it may have in progress at once. Nothing ran; retry the same request with the same key after `Retry-After` seconds. `RateLimit-Policy` and `RateLimit` name the limit.",
	domain.CodePreconditionFailed:    "`If-Match` names an old revision: read the resource again and re-apply your change.",
	domain.CodePreconditionRequired:  "The update needs an `If-Match` header with the revision (the `ETag`) you read.",
	domain.CodeBodyTooLarge:          "The request body exceeds the limit.",
	domain.CodeRequestTimeout:        "The request body did not arrive in time; nothing ran. Retry with the same key.",
	domain.CodeUnsupportedMediaType:  "The body is not `application/json`; send it with `Content-Type: application/json`.",
	domain.CodeValidation:            "The input is invalid; `errors` lists each field and why. 400 when the body is missing or cannot be read as JSON (not JSON, nested too deeply); 422 when it was read and a field is wrong, an id among them (the 36-character hyphenated form only).",
	domain.CodeReferenceNotFound:     "An id in the body names nothing in this workspace (a `media_ids` item that no media has); `errors` names the field. Fix the id, or create the resource first.",
	domain.CodeUnsafePayload:         "The service refused to write a payload that would carry a secret. A bug on our side; report it.",
	domain.CodeInternal:              "An unexpected error; nothing was committed. Retry with the same key.",
	domain.CodeUnavailable:           "A dependency is unavailable or saturated. Retry with the same key, after `Retry-After` when sent.",
}

// ErrorTableMarkdown renders the error table of docs/api.md from the code:
// one row per code, ordered by status then code, each with its anchor.
func ErrorTableMarkdown() string {
	codes := make([]domain.Code, 0, len(statusByCode))
	for c := range statusByCode {
		codes = append(codes, c)
	}
	slices.SortFunc(codes, func(a, b domain.Code) int {
		if d := statusByCode[a] - statusByCode[b]; d != 0 {
			return d
		}
		return strings.Compare(string(a), string(b))
	})
	var b strings.Builder
	b.WriteString("| code | status | retry same key | meaning |\n|---|---|:-:|---|\n")
	for _, c := range codes {
		retry := "no"
		if c.RetrySameKey() {
			retry = "yes"
		}
		var statuses []string
		for _, s := range StatusesOf(c) {
			statuses = append(statuses, fmt.Sprintf("%d %s", s, http.StatusText(s)))
		}
		fmt.Fprintf(&b, "| <a id=\"problem-%s\"></a>`%s` | %s | %s | %s |\n",
			strings.ToLower(string(c)), c, strings.Join(statuses, ", "), retry, problemMeaning[c])
	}
	return b.String()
}
