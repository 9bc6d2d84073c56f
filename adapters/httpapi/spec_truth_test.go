package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/testsupport/apitest"
)

// servedOperation is what the walk needs of an operation of the spec the
// server serves.
type servedOperation struct {
	ID          string `json:"operationId"`
	Method      string
	Path        string
	Parameters  []struct{ Name, In string }
	RequestBody *struct {
		Content map[string]any `json:"content"`
	} `json:"requestBody"`
	Responses map[string]any        `json:"responses"`
	Security  []map[string][]string `json:"security"`
	// Scope is the one scope the operation needs (x-once-scope).
	Scope       string `json:"x-once-scope"`
	Description string `json:"description"`
}

func (op servedOperation) takes(in, name string) bool {
	return slices.ContainsFunc(op.Parameters, func(p struct{ Name, In string }) bool { return p.In == in && p.Name == name })
}

// servedOperations reads the spec at /openapi.json.
func servedOperations(t *testing.T, s *apitest.Server) []servedOperation {
	t.Helper()
	res := s.Do(t, http.MethodGet, "/openapi.json", nil, nil)
	require.Equal(t, http.StatusOK, res.Status)
	var spec struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(res.Body, &spec))
	var ops []servedOperation
	for path, item := range spec.Paths {
		for method, raw := range item {
			var op servedOperation
			if json.Unmarshal(raw, &op) != nil || op.ID == "" {
				continue // a path-level field, not an operation
			}
			op.Method, op.Path = strings.ToUpper(method), path
			ops = append(ops, op)
		}
	}
	return ops
}

// probe is a malformed request the walk sends to every operation it fits.
type probe struct {
	name string
	fits func(servedOperation) bool
	// id replaces every path parameter.
	id          string
	body        string
	contentType string
	query       string
	noToken     bool
	// bodyIfRead is the body sent to an operation that reads one when body
	// is empty, so that the probe meets what it is about, not a missing body.
	bodyIfRead string
}

func readsBody(op servedOperation) bool { return op.RequestBody != nil }
func hasPathID(op servedOperation) bool { return strings.Contains(op.Path, "{") }
func always(servedOperation) bool       { return true }

// probes: what a schema-driven fuzzer sends that no valid request does.
func probes() []probe {
	id := uuid.NewString()
	large := `{"x":"` + strings.Repeat("a", httpapi.DefaultMaxBodyBytes) + `"}`
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	return []probe{
		{name: "no token", fits: always, id: id, noToken: true},
		{name: "unstorable query", fits: always, id: id, query: "?q=%00"},
		{name: "braced path id", fits: hasPathID, id: "{" + id + "}", bodyIfRead: `{}`},
		{name: "urn path id", fits: hasPathID, id: "urn:uuid:" + id, bodyIfRead: `{}`},
		{name: "hyphen-less path id", fits: hasPathID, id: strings.ReplaceAll(id, "-", ""), bodyIfRead: `{}`},
		{name: "unknown path id", fits: hasPathID, id: id, bodyIfRead: `{}`},
		{name: "no body", fits: readsBody, id: id},
		{name: "empty object", fits: readsBody, id: id, body: `{}`},
		{name: "not JSON", fits: readsBody, id: id, body: `{"title":`},
		{name: "nested too deeply", fits: readsBody, id: id, body: deep},
		{name: "too large", fits: readsBody, id: id, body: large},
		{name: "text/plain", fits: readsBody, id: id, body: `{}`, contentType: "text/plain"},
		{name: "braced ids in body", fits: readsBody, id: id, body: `{"media_ids":["{` + id + `}"],"user_id":"{` + id +
			`}","store_id":"{` + id + `}","product_id":"{` + id + `}","title":"t","price_minor":1,"currency":"USD","role":"member"}`},
	}
}

// TestEveryAnswerIsDeclared sends every probe to every operation of the
// served spec (with and without an Idempotency-Key where it takes one) and
// checks each answer against the spec and the error table: its status is
// declared for the operation, and a problem's code is in the table with
// that status. It then checks what the fuzzer found: the 400s of a body
// that cannot be read, addMember's 413 past the body limit, and ids not in
// the canonical form, all answered and declared.
func TestEveryAnswerIsDeclared(t *testing.T) {
	s := apitest.Memory(t)
	ops := servedOperations(t, s)
	require.GreaterOrEqual(t, len(ops), 30, "the spec's operations were read")
	got := map[string]apitest.Response{} // "operationId probe"
	for _, op := range ops {
		for _, pr := range probes() {
			if !pr.fits(op) {
				continue
			}
			keys := []string{""}
			if op.takes("header", "Idempotency-Key") {
				keys = append(keys, "fresh")
			}
			for _, key := range keys {
				res := send(t, s, op, pr, key)
				name := op.ID + " " + pr.name
				if key != "" {
					name += " with a key"
				}
				got[name] = res
				checkDeclared(t, name, op, res)
			}
		}
	}

	for _, id := range []string{"createProduct", "updateProduct", "addMember", "uploadMediaContent"} {
		res := got[id+" no body"]
		assert.Equal(t, http.StatusBadRequest, res.Status, "%s: %s", id, res.Body)
		assert.Equal(t, string(domain.CodeValidation), res.Problem(t).Code, "%s", id)
	}
	for _, id := range []string{"createProduct", "updateProduct", "addMember"} {
		for _, pr := range []string{"not JSON", "nested too deeply"} {
			res := got[id+" "+pr]
			assert.Equal(t, http.StatusBadRequest, res.Status, "%s %s: %s", id, pr, res.Body)
		}
	}
	for _, id := range []string{"createProduct", "updateProduct", "addMember", "createStore"} {
		name := id + " too large"
		if _, ok := got[name+" with a key"]; ok {
			name += " with a key"
		}
		res := got[name]
		assert.Equal(t, http.StatusRequestEntityTooLarge, res.Status, "%s: %s", name, res.Body)
		assert.Equal(t, string(domain.CodeBodyTooLarge), res.Problem(t).Code, "%s", name)
	}
	for _, pr := range []string{"braced path id", "urn path id", "hyphen-less path id"} {
		res := got["getProduct "+pr]
		assert.Equal(t, http.StatusUnprocessableEntity, res.Status, "getProduct %s: %s", pr, res.Body)
		assert.Equal(t, []string{"path.id"}, res.Problem(t).Locations(), "%s", pr)
	}
	for name, field := range map[string]string{
		"createProduct braced ids in body":                    "body.media_ids[0]",
		"addMember braced ids in body":                        "body.user_id",
		"publishProduct braced ids in body with a key":        "body.store_id",
		"startAITask braced ids in body with a key":           "body.product_id",
		"updateProduct braced ids in body":                    "body.media_ids[0]",
		"removeMember braced path id":                         "path.user_id",
		"completeMediaUpload braced path id with a key":       "path.id",
		"listOperations unstorable query":                     "query.q",
		"redriveAllDeadLetters unstorable query":              "query.q",
		"uploadMediaContent hyphen-less path id":              "path.id",
		"getOperation urn path id":                            "path.id",
		"publishProduct braced path id with a key":            "path.id",
		"replaceStoreAuthorization braced path id with a key": "path.id",
	} {
		res, ok := got[name]
		if !assert.True(t, ok, "no answer for %s", name) {
			continue
		}
		assert.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s: %s", name, res.Body)
		assert.Contains(t, res.Problem(t).Locations(), field, "%s: %s", name, res.Body)
	}
}

// send makes op's request for pr, with a fresh Idempotency-Key when key is
// set.
func send(t *testing.T, s *apitest.Server, op servedOperation, pr probe, key string) apitest.Response {
	t.Helper()
	path := op.Path
	for _, p := range op.Parameters {
		if p.In == "path" {
			path = strings.ReplaceAll(path, "{"+p.Name+"}", url.PathEscape(pr.id))
		}
	}
	var body any
	switch {
	case pr.body != "":
		body = pr.body
	case pr.bodyIfRead != "" && op.RequestBody != nil:
		body = pr.bodyIfRead
	}
	headers := map[string]string{}
	if pr.contentType != "" {
		headers["Content-Type"] = pr.contentType
	}
	if op.Path == "/v1/media/{id}/content" && pr.contentType == "" {
		headers["Content-Type"] = "image/png"
	}
	if key != "" {
		headers["Idempotency-Key"] = uuid.NewString()
	}
	if op.takes("header", "If-Match") {
		headers["If-Match"] = `"1"`
	}
	if op.ID == "revokeToken" {
		// A token of its own: the walk's must outlive a logout.
		headers["Authorization"] = "Bearer " + s.TokenFor(t, s.Workspace, s.User)
	}
	if pr.noToken {
		headers["Authorization"] = ""
	}
	return s.Do(t, op.Method, path+pr.query, body, headers)
}

// checkDeclared: res's status is declared for op; a problem's code is in
// the error table with that status.
func checkDeclared(t *testing.T, name string, op servedOperation, res apitest.Response) {
	t.Helper()
	status := strconv.Itoa(res.Status)
	assert.Contains(t, op.Responses, status, "%s answered an undeclared %d: %s", name, res.Status, res.Body)
	if res.Status < 400 {
		return
	}
	assert.Equal(t, "application/problem+json", res.Header.Get("Content-Type"), "%s: %s", name, res.Body)
	code := domain.Code(res.Problem(t).Code)
	assert.Contains(t, httpapi.StatusesOf(code), res.Status, "%s: code %q is not answered with %d in the error table", name, code, res.Status)
}
