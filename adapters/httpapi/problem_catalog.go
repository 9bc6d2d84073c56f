package httpapi

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/kinds"
)

// ProblemTypeBase prefixes the `type` URI of every problem: the error table
// of docs/api.md has an anchor per code, so the URI is also its
// documentation.
const ProblemTypeBase = "https://github.com/oncehq/once/blob/main/docs/api.md#problem-"

// ProblemType is the `type` URI naming code.
func ProblemType(code domain.Code) string {
	return ProblemTypeBase + strings.ToLower(string(code))
}

// errorEntry is one row of the error table: a code, the status it is
// answered with, and what it means for a client. A problem's title is the
// text of the status it is sent with (problemTitle), so a code that huma
// also raises at another status (codeByStatus) is titled after that one.
// Whether the same key may be retried is the domain's rule
// (domain.Code.RetrySameKey), which the queue and the dispatcher share.
type errorEntry struct {
	code   domain.Code
	status int
	help   string
}

// errorTable is the one table of the API's errors, in the order of the
// error table of docs/api.md (status, then code): the status mapping
// (statusByCode), the problem documents, StatusesOf and `once errors
// --markdown` are all read from it. It is the errors every route shares
// and the live-index conflict of each kind, as the kind's descriptor
// declares it (kinds.All), so a kind's conflict is written once.
var errorTable = withKindConflicts(sharedErrors, kinds.All)

// sharedErrors are the errors that belong to no kind.
var sharedErrors = []errorEntry{
	{domain.CodeIdempotencyKeyInvalid, http.StatusBadRequest, "The `Idempotency-Key` is not a UUID (bare or quoted), is the nil UUID, or was sent more than once."},
	{domain.CodeIdempotencyKeyMissing, http.StatusBadRequest, "The operation needs an `Idempotency-Key` header. Generate a UUID once per logical operation."},
	{domain.CodeUnauthenticated, http.StatusUnauthorized, "No bearer token, or it is invalid or expired, or an API key that is not valid or was revoked. Get a new token (or key)."},
	{domain.CodeTokenRevoked, http.StatusUnauthorized, "The bearer token was revoked: by its bearer (`POST /v1/tokens/revoke`, a logout), or by an admin revoking its user's tokens (`POST /v1/members/{user_id}/revoke-tokens`). Sign in again for a new token."},
	{domain.CodeForbidden, http.StatusForbidden, "The token's user is not a member of the workspace, or its role lacks the scope the route needs (admins only; the detail names the scope, see [Scopes](#scopes))."},
	{domain.CodeInsufficientScope, http.StatusForbidden, "The API key lacks the scope the route needs; the detail names it (see [Scopes](#scopes)). Nothing ran. Use a key created with that scope."},
	{domain.CodeNotFound, http.StatusNotFound, "No such resource in this workspace, or no such route."},
	{domain.CodeMethodNotAllowed, http.StatusMethodNotAllowed, "The route exists but not with this method; `Allow` lists the methods it takes."},
	{domain.CodeRequestTimeout, http.StatusRequestTimeout, "The request body did not arrive in time; nothing ran. Retry with the same key."},
	{domain.CodeConflict, http.StatusConflict, "The request conflicts with the current state of the resource."},
	{domain.CodeIdempotencyKeyReused, http.StatusConflict, "The key was used before with a different request (body, path, query or headers). Use a new key for a new request."},
	{domain.CodeIdempotencyInProgress, http.StatusConflict, "The first request with this key is still executing. Retry the same request with the same key after `Retry-After` seconds."},
	{domain.CodeInvalidState, http.StatusConflict, "The resource is not in a state that allows this, e.g. completing an upload whose bytes never arrived."},
	{domain.CodeOperationFinished, http.StatusConflict, "The operation ended (succeeded or failed) before the cancel: nothing is left to stop. Read it for its outcome."},
	{domain.CodeUploadMismatch, http.StatusUnprocessableEntity, "The uploaded object is not the registered size, content type or SHA-256; nothing was started. Upload the registered content again (a new upload URL comes with a repeated registration or a read), then complete."},
	{domain.CodeWebhookEndpointExists, http.StatusConflict, "An endpoint of the workspace already has this `url`; `resource_id` names it. Change that endpoint's event types instead."},
	{domain.CodeLimitReached, http.StatusConflict, "The workspace has as many of this resource as it may (webhook endpoints: `ONCE_WORKSPACE_WEBHOOK_ENDPOINTS`, 100 by default). Delete one first."},
	{domain.CodeStoreExists, http.StatusConflict, "A store with this platform and `external_shop_id` already exists; `resource_id` names it."},
	{domain.CodePreconditionFailed, http.StatusPreconditionFailed, "`If-Match` names an old revision: read the resource again and re-apply your change."},
	{domain.CodeBodyTooLarge, http.StatusRequestEntityTooLarge, "The request body exceeds the limit."},
	{domain.CodeUnsupportedMediaType, http.StatusUnsupportedMediaType, "The body is not `application/json`; send it with `Content-Type: application/json`."},
	{domain.CodeReferenceNotFound, http.StatusUnprocessableEntity, "An id in the body names nothing in this workspace (a `media_ids` item that no media has); `errors` names the field. Fix the id, or create the resource first."},
	{domain.CodeValidation, http.StatusUnprocessableEntity, "The input is invalid; `errors` lists each field and why. 400 when the body is missing or cannot be read as JSON (not JSON, nested too deeply); 422 when it was read and a field is wrong, an id among them (the 36-character hyphenated form only)."},
	{domain.CodePreconditionRequired, http.StatusPreconditionRequired, "The update needs an `If-Match` header with the revision (the `ETag`) you read."},
	{domain.CodeRateLimited, http.StatusTooManyRequests, "The workspace is over one of its limits: its rate of writes, or the requests it may have in progress at once. Nothing ran; retry the same request with the same key after `Retry-After` seconds. `RateLimit-Policy` and `RateLimit` name the limit."},
	{domain.CodeTooManyWaiters, http.StatusTooManyRequests, "Too many reads wait for an operation's end (`?wait=`) on this server, for the workspace or in all. Read it without `wait`, or ask again after `Retry-After` seconds."},
	{domain.CodeInternal, http.StatusInternalServerError, "An unexpected error; nothing was committed. Retry with the same key."},
	{domain.CodeUnsafePayload, http.StatusInternalServerError, "The service refused to write a payload that would carry a secret. A bug on our side; report it."},
	{domain.CodeUnavailable, http.StatusServiceUnavailable, "A dependency is unavailable or saturated. Retry with the same key, after `Retry-After` when sent."},
}

// withKindConflicts is shared plus each kind's conflict, in the page's
// order: status, then code.
func withKindConflicts(shared []errorEntry, all []kinds.Kind) []errorEntry {
	table := slices.Clone(shared)
	for _, k := range all {
		if c := k.Conflict; c != nil {
			table = append(table, errorEntry{domain.Code(c.Code), c.Status, c.Help})
		}
	}
	slices.SortFunc(table, func(a, b errorEntry) int {
		return cmp.Or(cmp.Compare(a.status, b.status), strings.Compare(string(a.code), string(b.code)))
	})
	return table
}

// statusByCode is the status column of errorTable, for lookups.
var statusByCode = func() map[domain.Code]int {
	m := make(map[domain.Code]int, len(errorTable))
	for _, e := range errorTable {
		m[e.code] = e.status
	}
	return m
}()

// problemTitle is the title of a problem sent with status.
func problemTitle(status int) string { return http.StatusText(status) }

// ErrorTableMarkdown renders the error table of docs/api.md from errorTable:
// one row per code, in the table's order, each with its anchor.
func ErrorTableMarkdown() string {
	var b strings.Builder
	b.WriteString("| code | status | retry same key | meaning |\n|---|---|:-:|---|\n")
	for _, e := range errorTable {
		retry := "no"
		if e.code.RetrySameKey() {
			retry = "yes"
		}
		var statuses []string
		for _, s := range StatusesOf(e.code) {
			statuses = append(statuses, fmt.Sprintf("%d %s", s, problemTitle(s)))
		}
		fmt.Fprintf(&b, "| <a id=\"problem-%s\"></a>`%s` | %s | %s | %s |\n",
			strings.ToLower(string(e.code)), e.code, strings.Join(statuses, ", "), retry, e.help)
	}
	return b.String()
}
