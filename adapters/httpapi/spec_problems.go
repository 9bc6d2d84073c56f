package httpapi

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/danielgtaylor/huma/v2"
)

// shapeStatuses are the statuses op can answer by its shape alone, whatever
// its handler does: what the middlewares and huma answer before it runs.
//
//   - Every operation: 422 (a query parameter no store can keep, a
//     parameter out of its schema) and 500.
//   - An authenticated one: 401, 403 and 503 (the store is unavailable or
//     saturated); 429 is documentRateLimited's, with its headers.
//   - One that reads a body: 400 (missing, or not readable as JSON: not
//     JSON, nested too deeply), 408 (it did not arrive in time), 413 (over
//     its MaxBodyBytes); a JSON one 415 (another Content-Type).
//   - One with a path parameter: 404.
//   - One that takes an Idempotency-Key: 400 (missing or malformed) and
//     409 (reused, or its first request still running); If-Match: 412 and
//     428.
func shapeStatuses(op *huma.Operation) []int {
	statuses := []int{http.StatusUnprocessableEntity, http.StatusInternalServerError}
	if len(op.Security) > 0 {
		statuses = append(statuses, http.StatusUnauthorized, http.StatusForbidden, http.StatusServiceUnavailable)
	}
	if op.RequestBody != nil {
		statuses = append(statuses, http.StatusBadRequest, http.StatusRequestTimeout, http.StatusRequestEntityTooLarge)
		if takesJSON(op) {
			statuses = append(statuses, http.StatusUnsupportedMediaType)
		}
	}
	for _, p := range op.Parameters {
		switch {
		case p.In == "path":
			statuses = append(statuses, http.StatusNotFound)
		case p.In == "header" && p.Name == idempotencyKeyHeader:
			statuses = append(statuses, http.StatusBadRequest, http.StatusConflict)
		case p.In == "header" && p.Name == "If-Match":
			statuses = append(statuses, http.StatusPreconditionFailed, http.StatusPreconditionRequired)
		}
	}
	slices.Sort(statuses)
	return slices.Compact(statuses)
}

// documentShapeProblems lists on every operation the statuses its shape
// can answer (shapeStatuses), each with the problem schema, beside those
// its registration lists for its handler.
func documentShapeProblems(api huma.API) {
	for _, item := range api.OpenAPI().Paths {
		for _, op := range operationsOf(item) {
			if op == nil || op.Responses["500"] == nil {
				continue
			}
			for _, status := range shapeStatuses(op) {
				key := strconv.Itoa(status)
				if op.Responses[key] != nil {
					continue
				}
				problem := *op.Responses["500"]
				problem.Description = http.StatusText(status)
				op.Responses[key] = &problem
			}
		}
	}
}

// CanonicalUUIDPattern is the one textual form of a UUID the API reads, in
// paths, queries and bodies alike, as for the Idempotency-Key: 8-4-4-4-12
// hexadecimal digits, in either case (RFC 9562 section 4). The braced,
// urn:uuid: and hyphen-less forms huma's uuid format accepts are refused,
// so that one id has one spelling.
const CanonicalUUIDPattern = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"

// requireCanonicalIDs gives every uuid an operation reads (its parameters,
// and its JSON body to any depth) CanonicalUUIDPattern, so the spec says it
// and huma's validation refuses any other form with 422 naming the field.
func requireCanonicalIDs(api huma.API) {
	o := api.OpenAPI()
	seen := map[*huma.Schema]bool{}
	var walk func(s *huma.Schema)
	walk = func(s *huma.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		if s.Ref != "" {
			walk(o.Components.Schemas.SchemaFromRef(s.Ref))
			return
		}
		if s.Type == huma.TypeString && s.Format == "uuid" && s.Pattern == "" {
			s.Pattern = CanonicalUUIDPattern
			s.PrecomputeMessages()
		}
		walk(s.Items)
		for _, p := range s.Properties {
			walk(p)
		}
	}
	for _, item := range o.Paths {
		for _, op := range operationsOf(item) {
			if op == nil {
				continue
			}
			for _, p := range op.Parameters {
				walk(p.Schema)
			}
			if takesJSON(op) {
				walk(op.RequestBody.Content["application/json"].Schema)
			}
		}
	}
}
