package httpapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

// countingBody counts the bytes a handler read of a request's body.
type countingBody struct {
	r    io.Reader
	read int
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += n
	return n, err
}

func (b *countingBody) Close() error { return nil }

// operationsWithBodies calls fn with every operation of api that takes a
// request body.
func operationsWithBodies(api huma.API, fn func(path string, op *huma.Operation)) {
	for path, item := range api.OpenAPI().Paths {
		for _, op := range operationsOf(item) {
			if op != nil && op.RequestBody != nil {
				fn(path, op)
			}
		}
	}
}

// What a request's body costs before the workspace's limits apply
// (admitsItselfMeta): nothing for a caller who is not authenticated,
// whose body is never read, on every route that takes one.
func TestNoBodyIsReadBeforeAuthentication(t *testing.T) {
	mux := http.NewServeMux()
	api := NewAPI(mux, Deps{Authenticate: func(context.Context, string) (model.Principal, error) {
		return model.Principal{}, domain.Errorf(domain.CodeUnauthenticated, "bad token")
	}})
	n := 0
	operationsWithBodies(api, func(path string, op *huma.Operation) {
		if len(op.Security) == 0 {
			return
		}
		n++
		body := &countingBody{r: strings.NewReader(`{"name": "` + strings.Repeat("x", 10_000) + `"}`)}
		req := httptest.NewRequest(op.Method, strings.ReplaceAll(path, "{id}", "01a24ece-ecd5-707f-b21d-6d9fb6180d20"), body)
		req.Header.Set("Authorization", "Bearer not-a-token")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "8f421c70-5a4c-4d8e-9f4e-0c2b1a7d9e11")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		assert.Equal(t, http.StatusUnauthorized, rec.Code, "%s %s", op.Method, path)
		assert.Zero(t, body.read, "%s %s: body read before authentication", op.Method, path)
	})
	assert.Positive(t, n)
}

// Every route that takes a body caps it at ONCE_MAX_BODY_BYTES, none is
// left to huma's default (1 MiB), and the routes whose use case applies
// the workspace's limits itself (admitsItselfMeta: their bodies are read,
// validated and fingerprinted before admission) are among them. The one
// larger body, a media file's bytes, is read after admission.
func TestEveryBodyIsCapped(t *testing.T) {
	const maxBody = 4096
	api := NewAPI(http.NewServeMux(), Deps{MaxBodyBytes: maxBody})
	operationsWithBodies(api, func(path string, op *huma.Operation) {
		if op.OperationID == "uploadMediaContent" {
			assert.NotEqual(t, true, op.Metadata[admitsItselfMeta], "a media file is read after admission")
			assert.EqualValues(t, MaxMediaBytes+1, op.MaxBodyBytes)
			return
		}
		assert.EqualValues(t, maxBody, op.MaxBodyBytes, "%s %s", op.Method, path)
	})
}
