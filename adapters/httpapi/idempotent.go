package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/idempotency"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

const idempotencyKeyHeader = "Idempotency-Key"

// IdempotencyKeyHeader is embedded in the input of every idempotent
// operation so the header reaches the spec. The middleware below parses it
// before the body is read; the field is only documentation.
type IdempotencyKeyHeader struct {
	IdempotencyKey string `header:"Idempotency-Key" doc:"A UUID the client generates once per logical operation and sends again on every retry of it. Accepted bare or as a quoted string (\"...\"). A retry with the same key and request gets the original response with Idempotent-Replayed: true." example:"8f421c70-5a4c-4d8e-9f4e-0c2b1a7d9e11"`
}

// IdempotentOutput is the response of an idempotent operation, fresh or
// replayed.
type IdempotentOutput[B any] struct {
	Status   int
	Location string `header:"Location" doc:"Where the created resource lives"`
	Replayed string `header:"Idempotent-Replayed" doc:"\"true\" when this response is the saved response of an earlier execution with the same Idempotency-Key" enum:"true"`
	Body     B
}

// requireIdempotencyKey parses the Idempotency-Key (every value sent: one is
// required) before the body is read, so a missing or malformed key costs
// nothing, and records the request facts the fingerprint needs.
func requireIdempotencyKey(api huma.API) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		var values []string
		ctx.EachHeader(func(name, value string) {
			if strings.EqualFold(name, idempotencyKeyHeader) {
				values = append(values, value)
			}
		})
		key, err := idempotency.ParseKeyHeader(values)
		if err != nil {
			writeDomainError(api, ctx, err)
			return
		}
		u := ctx.URL()
		next(huma.WithValue(ctx, requestFactsKey{}, requestFacts{
			Key:         key,
			Method:      ctx.Method(),
			EscapedPath: u.EscapedPath(),
			RawQuery:    u.RawQuery,
			ContentType: ctx.Header("Content-Type"),
			IfMatch:     ctx.Header("If-Match"),
		}))
	}
}

// markHeaderRequired makes the spec say what our code enforces. The struct
// field itself stays optional so that huma's generic validation does not
// answer 422 before our own answer (400 IDEMPOTENCY_KEY_MISSING, 428).
func markHeaderRequired(api huma.API, method, path, header string) {
	op := registered(api, method, path)
	if op == nil {
		return
	}
	for _, p := range op.Parameters {
		if p.In == "header" && p.Name == header {
			// No format: uuid on the key's schema: huma would then validate
			// it and refuse the quoted form the IETF draft allows.
			p.Required = true
		}
	}
}

// registerIdempotent registers an idempotent operation: the key middleware,
// the body cap, and the spec marking the key as required.
func registerIdempotent[I, O any](api huma.API, op huma.Operation, maxBody int64, handler func(context.Context, *I) (*O, error)) {
	op.Middlewares = append(op.Middlewares, requireIdempotencyKey(api))
	if op.Metadata == nil {
		op.Metadata = map[string]any{}
	}
	op.Metadata[admitsItselfMeta] = true
	op.MaxBodyBytes = maxBody
	op.Description += idempotencyRules
	if out, ok := reflect.TypeFor[O]().FieldByName("Body"); ok {
		checkShownOnce(out.Type)
	}
	huma.Register(api, op, handler)
	markHeaderRequired(api, op.Method, op.Path, idempotencyKeyHeader)
	// RawBody (kept for the fingerprint) makes huma advertise a binary body
	// too; the operation takes JSON only.
	spec := registered(api, op.Method, op.Path)
	if spec == nil {
		return
	}
	if spec.RequestBody != nil {
		delete(spec.RequestBody.Content, "application/octet-stream")
	}
	// A duplicate still executing is told when to come back.
	if conflict := spec.Responses["409"]; conflict != nil {
		if conflict.Headers == nil {
			conflict.Headers = map[string]*huma.Param{}
		}
		conflict.Headers["Retry-After"] = &huma.Param{
			Description: "Seconds to wait before retrying with the same Idempotency-Key; sent with IDEMPOTENCY_REQUEST_IN_PROGRESS.",
			Schema:      &huma.Schema{Type: huma.TypeInteger},
		}
	}
}

// runIdempotent runs work at most once for the request's key and renders the
// result, fresh or replayed, as an IdempotentOutput. rawBody is the request
// body as received (nil for operations without one). work returns the
// status, the Location (may be empty) and the body of a fresh execution;
// the body is saved without its shown:"once" fields (shown_once.go), so a
// replay answers without them and no stored response ever holds them.
func runIdempotent[B any](ctx context.Context, svc *idempotency.Service, rawBody []byte,
	work func(ctx context.Context, tx ports.Tx, p model.Principal) (status int, location string, body B, err error),
) (*IdempotentOutput[B], error) {
	return runIdempotentChecked(ctx, svc, rawBody, nil, work)
}

// runIdempotentChecked is runIdempotent with check, what the request must
// pass that waits on the network (DNS): the idempotency service runs it
// once the workspace's limits admit the request and no saved response in
// memory answers it, outside the transaction (idempotency.Request.Check),
// so a member's requests drive look-ups only as fast as its limits let
// them, and a replay repeats none.
// idempotencyCaller is whose keys an Idempotency-Key is among: the user's,
// or an API key's own (it acts as its creator, but a key and its creator,
// or two keys of one admin, must never replay each other's answers).
func idempotencyCaller(p model.Principal) uuid.UUID {
	if p.APIKeyID != uuid.Nil {
		return p.APIKeyID
	}
	return p.UserID
}

func runIdempotentChecked[B any](ctx context.Context, svc *idempotency.Service, rawBody []byte,
	check func(ctx context.Context, p model.Principal) error,
	work func(ctx context.Context, tx ports.Tx, p model.Principal) (status int, location string, body B, err error),
) (*IdempotentOutput[B], error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	facts, err := factsFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	path, err := idempotency.NormalizePath(facts.EscapedPath)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	req := idempotency.Request{
		Scope: model.IdempotencyScope{
			WorkspaceID: p.WorkspaceID,
			UserID:      idempotencyCaller(p),
			Method:      strings.ToUpper(facts.Method),
			Path:        path,
			Key:         facts.Key,
		},
		Shape: idempotency.RequestShape{
			Method:      facts.Method,
			Path:        path,
			Query:       facts.RawQuery,
			ContentType: facts.ContentType,
			IfMatch:     facts.IfMatch,
			Body:        rawBody,
		},
	}
	if check != nil {
		req.Check = func(ctx context.Context) error { return check(ctx, p) }
	}

	var fresh *IdempotentOutput[B]
	result, err := svc.Run(ctx, req, func(ctx context.Context, tx ports.Tx) (model.SavedResponse, error) {
		status, location, body, err := work(ctx, tx, p)
		if err != nil {
			return model.SavedResponse{}, err
		}
		raw, err := savedBody(body)
		if err != nil {
			return model.SavedResponse{}, domain.Wrap(domain.CodeInternal, err, "response cannot be encoded")
		}
		fresh = &IdempotentOutput[B]{Status: status, Location: location, Body: body}
		headers := map[string]string{}
		if location != "" {
			headers["Location"] = location
		}
		return model.SavedResponse{Status: status, Headers: headers, Body: raw}, nil
	})
	logger(ctx).LogAttrs(ctx, levelFor(err), "idempotent request",
		logAttrs(req, p, result.Replayed, err)...)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	if !result.Replayed {
		return fresh, nil
	}
	out := &IdempotentOutput[B]{
		Status:   result.Response.Status,
		Location: result.Response.Headers["Location"],
		Replayed: "true",
	}
	if err := json.Unmarshal(result.Response.Body, &out.Body); err != nil {
		return nil, toProblem(ctx, domain.Wrap(domain.CodeInternal, err, "saved response cannot be decoded"))
	}
	return out, nil
}

// registered finds an operation in the spec after registration.
func registered(api huma.API, method, path string) *huma.Operation {
	item := api.OpenAPI().Paths[path]
	if item == nil {
		return nil
	}
	switch method {
	case http.MethodGet:
		return item.Get
	case http.MethodPost:
		return item.Post
	case http.MethodPut:
		return item.Put
	case http.MethodPatch:
		return item.Patch
	case http.MethodDelete:
		return item.Delete
	}
	return nil
}
