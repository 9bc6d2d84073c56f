package httpapi

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEveryOperationDeclaresWhatItCanAnswer walks every operation of the
// spec against the error table: each error status it declares is the
// status of a code of the table and carries the problem schema; it
// declares every status its shape can answer (a body, a path id, an
// Idempotency-Key, If-Match, authentication); one without a body declares
// none of the body's; and every JSON body is bounded by MaxBodyBytes.
func TestEveryOperationDeclaresWhatItCanAnswer(t *testing.T) {
	const maxBody = 12345 // not the default, so an operation ignoring Deps shows
	o := NewAPI(http.NewServeMux(), Deps{MaxBodyBytes: maxBody}).OpenAPI()
	table := map[int]bool{}
	for code := range statusByCode {
		for _, s := range StatusesOf(code) {
			table[s] = true
		}
	}
	operations := 0
	for path, item := range o.Paths {
		for _, op := range operationsOf(item) {
			if op == nil {
				continue
			}
			operations++
			name := op.OperationID + " " + path
			for key, resp := range op.Responses {
				status, err := strconv.Atoi(key)
				if !assert.NoError(t, err, "%s declares %q", name, key) || status < 400 {
					continue
				}
				assert.True(t, table[status], "%s declares %d, which no code of the error table has", name, status)
				mt := resp.Content["application/problem+json"]
				if assert.NotNil(t, mt, "%s %d is not a problem", name, status) {
					assert.Equal(t, "#/components/schemas/Problem", mt.Schema.Ref, "%s %d", name, status)
				}
			}
			want := append(shapeStatuses(op), http.StatusInternalServerError)
			if len(op.Security) > 0 {
				want = append(want, http.StatusTooManyRequests)
			}
			for _, s := range want {
				assert.NotNil(t, op.Responses[strconv.Itoa(s)], "%s does not declare %d", name, s)
			}
			if op.RequestBody == nil {
				for _, s := range []int{http.StatusRequestTimeout, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType} {
					assert.Nil(t, op.Responses[strconv.Itoa(s)], "%s reads no body, yet declares %d", name, s)
				}
			}
			if takesJSON(op) {
				assert.Equal(t, int64(maxBody), op.MaxBodyBytes, "%s: its body is not bounded by MaxBodyBytes", name)
			}
		}
	}
	assert.GreaterOrEqual(t, operations, 30, "the operations were found")
	assert.Equal(t, int64(MaxMediaBytes+1), o.Paths["/v1/media/{id}/content"].Put.MaxBodyBytes,
		"an upload is bounded by the media limit")
}
