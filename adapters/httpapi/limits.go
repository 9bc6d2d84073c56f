package httpapi

import (
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/limits"
)

// admitsItselfMeta marks, in an operation's Metadata, a route whose use
// case applies the workspace's limits itself: every route through the
// idempotency service (idempotency.WithAdmission), after its in-memory
// answers, so that a storm of retries answered from memory is never
// refused; and the read of an operation (operations.WithAdmission),
// around each database read and never while it waits for the end
// (?wait=), so that waiting reads hold none of the workspace's slots.
//
// What such a route does before the workspace's limits apply, and why it
// stays bounded: the request is authenticated first (authMiddleware; an
// unauthenticated caller's body is never read), then huma reads its body,
// at most ONCE_MAX_BODY_BYTES (256 KiB by default: every route with a body
// is capped there, TestEveryBodyIsCapped), decodes and validates it, and
// the idempotency service fingerprints it (an HMAC of its canonical JSON)
// and looks its key up in memory. That cannot move after admission: a
// retry answered from the in-memory saved response needs its fingerprint,
// which needs the body, and must never be refused. The cost is linear in
// what the authenticated caller sends, with no amplification (nothing is
// looked up on the network: DNS checks run after admission,
// idempotency.Request.Check), and no database work of its own is done
// before it (a replay from memory has the store's identity confirmed by a
// question the whole process shares, one at a time: idempotency's
// confirmations).
const admitsItselfMeta = "once-admits-itself"

// admitWorkspace applies the workspace's limits (domain/limits) to every
// authenticated operation that does not apply them itself
// (admitsItselfMeta): each holds one of the workspace's slots of concurrent work for
// as long as it runs, and a write (any method but GET and HEAD) is charged
// to the workspace's rate before it runs. Reads are not charged: they are
// cheap, and a client polling its operations must not use up the allowance
// of its writes; the cap on concurrent work bounds them.
func admitWorkspace(api huma.API, l *limits.Limits) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		op, p, ok := securedCall(ctx)
		if !ok || op.Metadata[admitsItselfMeta] == true {
			next(ctx)
			return
		}
		refuse := func(err error) {
			// Who was limited: the metric has no workspace label.
			attrs := []any{slog.String("workspace_id", p.WorkspaceID.String()), slog.String("code", string(domain.ErrorCode(err))),
				slog.String("error", err.Error())}
			if p.APIKeyID != uuid.Nil {
				attrs = append(attrs, apiKeyAttr(p.APIKeyID))
			}
			logger(ctx.Context()).InfoContext(ctx.Context(), "request limited", attrs...)
			writeDomainError(api, ctx, err)
		}
		leave, err := l.Enter(ctx.Context(), p.WorkspaceID)
		if err != nil {
			refuse(err)
			return
		}
		defer leave()
		if ctx.Method() != http.MethodGet && ctx.Method() != http.MethodHead {
			if err := l.Spend(ctx.Context(), p.WorkspaceID); err != nil {
				refuse(err)
				return
			}
		}
		next(ctx)
	}
}

// RateLimitDraft is the version of the IETF draft whose header syntax the
// 429 answers follow (RateLimit-Policy and RateLimit as Structured Field
// lists of quoted policy names with parameters, unchanged since -08).
const RateLimitDraft = "draft-ietf-httpapi-ratelimit-headers-10"

// setRateLimitHeaders describes the policy r exceeded, in the fields of
// RateLimitDraft: its quota (q requests per w seconds, or q concurrent
// requests) and that nothing remains (r=0) for t seconds, the Retry-After.
// The burst of the writes policy, which the draft has no parameter for,
// is the vendor parameter once-burst.
func setRateLimitHeaders(h http.Header, r *limits.Refusal) {
	t := retryAfterSeconds(r.RetryAfter)
	switch r.Policy {
	case limits.PolicyConcurrency:
		h.Set("RateLimit-Policy", fmt.Sprintf(`%q;q=%d;qu="concurrent-requests"`, r.Policy, r.Quota))
	default:
		h.Set("RateLimit-Policy", fmt.Sprintf(`%q;q=%d;w=%d;once-burst=%d`, r.Policy, r.Quota, int(r.Window/time.Second), r.Burst))
	}
	h.Set("RateLimit", fmt.Sprintf(`%q;r=0;t=%d`, r.Policy, t))
}

// retryAfterSeconds is d in whole seconds, rounded up (coming back early
// only earns another refusal), and at least 1.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// rateLimitHeaders are the headers of a 429, declared once under
// components/headers and referred to by every operation.
var rateLimitHeaders = map[string]*huma.Header{
	"Retry-After": {
		Description: "Seconds to wait before retrying (with the same Idempotency-Key, where the operation takes one).",
		Schema:      &huma.Schema{Type: huma.TypeInteger},
	},
	"RateLimit-Policy": {
		Description: `The workspace's policy that was exceeded, in the syntax of ` + RateLimitDraft + `: ` +
			`"writes";q=REQUESTS;w=SECONDS;once-burst=BURST (the rate of writes), or "concurrency";q=N;qu="concurrent-requests" ` +
			`(the requests one workspace may have in progress on one server).`,
		Schema:  &huma.Schema{Type: huma.TypeString},
		Example: `"writes";q=100;w=1;once-burst=200`,
	},
	"RateLimit": {
		Description: `What remains of that policy (` + RateLimitDraft + `): nothing, for t seconds (the Retry-After).`,
		Schema:      &huma.Schema{Type: huma.TypeString},
		Example:     `"writes";r=0;t=1`,
	},
}

// documentRateLimited lists 429 RATE_LIMITED, with its headers, on every
// authenticated operation: each is subject to the cap on concurrent work,
// and writes to the rate as well.
func documentRateLimited(api huma.API) {
	o := api.OpenAPI()
	if o.Components.Headers == nil {
		o.Components.Headers = map[string]*huma.Header{}
	}
	refs := map[string]*huma.Param{}
	for name, h := range rateLimitHeaders {
		o.Components.Headers[name] = h
		refs[name] = &huma.Param{Ref: "#/components/headers/" + name}
	}
	for _, item := range o.Paths {
		for _, op := range operationsOf(item) {
			if op == nil || len(op.Security) == 0 || op.Responses["500"] == nil {
				continue
			}
			limited := *op.Responses["500"]
			limited.Description = http.StatusText(http.StatusTooManyRequests)
			limited.Headers = refs
			op.Responses["429"] = &limited
		}
	}
}
