package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/testsupport/apitest"
)

// hostileServer runs the memory configuration with the Dispatcher and the
// workers, so that every endpoint's preconditions (a verified store) can be
// met and each hostile request reaches as far as it can.
func hostileServer(t *testing.T) *apitest.Server {
	cfg := apitest.Config("")
	cfg.Dispatcher, cfg.Worker = true, true
	return apitest.Start(t, cfg, nil)
}

// assertRefused checks the answer every hostile request must get: a 4xx
// problem with a stable code that tells the client not to retry the same
// request with the same key.
func assertRefused(t *testing.T, r apitest.Response) apitest.Problem {
	t.Helper()
	require.GreaterOrEqual(t, r.Status, 400, "%s", r.Body)
	require.Less(t, r.Status, 500, "hostile input is the client's error, never a 5xx: %s", r.Body)
	assert.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
	p := r.Problem(t)
	assert.Equal(t, r.Status, p.Status)
	assert.NotEmpty(t, p.Code)
	assert.False(t, p.RetrySameKey, "retry_same_key must be false for %s", p.Code)
	return p
}

// hostileEndpoint is an operation that takes a JSON body, with its path
// ready and a body it would accept.
type hostileEndpoint struct {
	name, method, path string
	valid              map[string]any
	headers            map[string]string
}

// hostileBody is one way to mangle a valid body. location, when set, is the
// field the 422 must name.
type hostileBody struct {
	name        string
	raw         []byte
	contentType string
	status      int
	code        string
	location    string
}

// leafAt is one leaf of a body, where it is (huma's way:
// body.credentials.api_key, body.source_urls[1]) and how to replace it.
type leafAt struct {
	location string
	value    any
	set      func(any)
}

// leaves lists v's leaves, keys in order, items in order.
func leaves(v any, location string) []leafAt {
	var out []leafAt
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if sub := leaves(v[k], location+"."+k); sub != nil {
				out = append(out, sub...)
			} else {
				out = append(out, leafAt{location + "." + k, v[k], func(x any) { v[k] = x }})
			}
		}
	case []any:
		for i := range v {
			at := fmt.Sprintf("%s[%d]", location, i)
			if sub := leaves(v[i], at); sub != nil {
				out = append(out, sub...)
			} else {
				out = append(out, leafAt{at, v[i], func(x any) { v[i] = x }})
			}
		}
	}
	return out
}

const hostileMarker = "HOSTILE-MARKER-0b5e"

// withLeaf returns the valid body with the leaf at location replaced by the
// raw JSON text raw.
func withLeaf(t *testing.T, valid map[string]any, location, raw string) []byte {
	t.Helper()
	copied := copyBody(t, valid)
	for _, at := range leaves(copied, "body") {
		if at.location == location {
			at.set(hostileMarker)
		}
	}
	encoded, err := json.Marshal(copied)
	require.NoError(t, err)
	require.Contains(t, string(encoded), hostileMarker, location)
	return bytes.Replace(encoded, []byte(`"`+hostileMarker+`"`), []byte(raw), 1)
}

func copyBody(t *testing.T, valid map[string]any) map[string]any {
	t.Helper()
	encoded, err := json.Marshal(valid)
	require.NoError(t, err)
	var copied map[string]any
	require.NoError(t, json.Unmarshal(encoded, &copied))
	return copied
}

// hostileBodies mangles valid every way the list of hostile input names:
// text no store can keep in each string (422 naming it), wrong and huge
// values in each field, and broken, empty or foreign documents.
func hostileBodies(t *testing.T, valid map[string]any) []hostileBody {
	t.Helper()
	encoded, err := json.Marshal(valid)
	require.NoError(t, err)
	var out []hostileBody
	for _, at := range leaves(copyBody(t, valid), "body") {
		location := at.location
		wrongType := `42`
		if _, isString := at.value.(string); !isString {
			wrongType = `"42"`
		}
		leaf := func(name, raw string) hostileBody {
			return hostileBody{name: name + " in " + location, raw: withLeaf(t, valid, location, raw)}
		}
		unstorable := func(name, raw string) hostileBody {
			h := leaf(name, raw)
			h.status, h.code, h.location = http.StatusUnprocessableEntity, "VALIDATION_FAILED", location
			return h
		}
		out = append(out,
			unstorable("NUL", `"a\u0000b"`),
			unstorable("NUL alone", `"\u0000"`),
			unstorable("invalid UTF-8", "\"a\xffb\""),
			unstorable("truncated UTF-8", "\"caf\xc3\""),
			unstorable("lone surrogate", `"a\ud800b"`),
			leaf("raw NUL byte", "\"a\x00b\""),
			leaf("huge number", `1e400`),
			leaf("huge integer", `123456789012345678901234567890`),
			leaf("negative huge integer", `-123456789012345678901234567890`),
			leaf("deep arrays", strings.Repeat("[", 20000)+strings.Repeat("]", 20000)),
			leaf("deep objects", strings.Repeat(`{"a":`, 20000)+"1"+strings.Repeat("}", 20000)),
			leaf("object", `{"x":[true]}`),
			leaf("wrong type", wrongType),
			leaf("boolean", `true`),
			leaf("very long string", `"`+strings.Repeat("x", 100000)+`"`),
		)
	}
	withMember := strings.TrimSuffix(string(encoded), "}") + `,"x\u0000y":1}`
	return append(out,
		hostileBody{name: "NUL in a member name", raw: []byte(withMember), status: http.StatusUnprocessableEntity, code: "VALIDATION_FAILED", location: "body"},
		hostileBody{name: "every value null", raw: []byte(allLeaves(t, valid, "null"))},
		hostileBody{name: "every value an array", raw: []byte(allLeaves(t, valid, "[]"))},
		hostileBody{name: "trailing garbage", raw: append(append([]byte{}, encoded...), " xx"...)},
		hostileBody{name: "two documents", raw: append(append([]byte{}, encoded...), encoded...)},
		hostileBody{name: "truncated", raw: encoded[:len(encoded)/2]},
		hostileBody{name: "byte order mark", raw: append([]byte("\xef\xbb\xbf"), encoded...)},
		hostileBody{name: "empty body", raw: []byte{}},
		hostileBody{name: "JSON null", raw: []byte("null")},
		hostileBody{name: "JSON array", raw: []byte("[]")},
		hostileBody{name: "JSON string", raw: []byte(`"x"`)},
		hostileBody{name: "JSON number", raw: []byte("1")},
		hostileBody{name: "deeply nested document", raw: []byte(strings.Repeat("[", 100000))},
		hostileBody{name: "text/plain", raw: encoded, contentType: "text/plain", status: http.StatusUnsupportedMediaType, code: "UNSUPPORTED_MEDIA_TYPE"},
		hostileBody{name: "form", raw: []byte("a=1"), contentType: "application/x-www-form-urlencoded", status: http.StatusUnsupportedMediaType, code: "UNSUPPORTED_MEDIA_TYPE"},
		hostileBody{name: "XML", raw: []byte("<a/>"), contentType: "application/xml", status: http.StatusUnsupportedMediaType, code: "UNSUPPORTED_MEDIA_TYPE"},
	)
}

// allLeaves returns valid with every leaf replaced by the raw JSON leaf.
func allLeaves(t *testing.T, valid map[string]any, leaf string) string {
	t.Helper()
	var b strings.Builder
	var write func(v any)
	write = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			b.WriteString("{")
			first := true
			for k, e := range v {
				if !first {
					b.WriteString(",")
				}
				first = false
				fmt.Fprintf(&b, "%q:", k)
				write(e)
			}
			b.WriteString("}")
		default:
			b.WriteString(leaf)
		}
	}
	write(copyBody(t, valid))
	return b.String()
}

// hostileEndpoints are the operations that take a JSON body: every
// idempotent one that has a body, and the drafts.
func hostileEndpoints(t *testing.T, s *apitest.Server) []hostileEndpoint {
	t.Helper()
	var out []hostileEndpoint
	for _, c := range idempotentCases() {
		path, body, _ := c.prepare(t, s)
		if body == nil {
			continue
		}
		encoded, err := json.Marshal(body)
		require.NoError(t, err)
		var valid map[string]any
		require.NoError(t, json.Unmarshal(encoded, &valid))
		out = append(out, hostileEndpoint{name: c.name, method: c.method, path: path, valid: valid})
	}
	draft := map[string]any{"title": "Linen shirt", "description": "Blue", "price_minor": 2500, "currency": "USD"}
	product := createProduct(t, s)
	out = append(out,
		hostileEndpoint{name: "createProduct", method: "POST", path: "/v1/products", valid: draft},
		hostileEndpoint{name: "updateProduct", method: "PUT", path: "/v1/products/" + product.String(), valid: draft,
			headers: map[string]string{"If-Match": `"1"`}})
	return out
}

// Every operation that takes a JSON body answers every hostile body with a
// 4xx, a code and retry_same_key false, and executes nothing; NUL, invalid
// UTF-8 and lone surrogates are 422 naming the field, an unsupported media
// type 415 UNSUPPORTED_MEDIA_TYPE.
func TestHostileBodiesAreRefusedCleanly(t *testing.T) {
	s := hostileServer(t)
	endpoints := hostileEndpoints(t, s)
	require.Len(t, endpoints, 8)
	for _, e := range endpoints {
		t.Run(e.name, func(t *testing.T) {
			for _, h := range hostileBodies(t, e.valid) {
				t.Run(h.name, func(t *testing.T) {
					before := len(s.Events(t))
					headers := map[string]string{"Idempotency-Key": key(), "Content-Type": "application/json"}
					for k, v := range e.headers {
						headers[k] = v
					}
					if h.contentType != "" {
						headers["Content-Type"] = h.contentType
					}
					r := s.Do(t, e.method, e.path, h.raw, headers)
					p := assertRefused(t, r)
					if h.status != 0 {
						assert.Equal(t, h.status, r.Status, "%s", r.Body)
					}
					if h.code != "" {
						assert.Equal(t, h.code, p.Code)
					}
					if h.location != "" {
						assert.Contains(t, p.Locations(), h.location, "%s", r.Body)
					}
					assert.NotContains(t, string(r.Body), hostileMarker)
					assert.Equal(t, before, len(s.Events(t)), "a refused request executes nothing")
				})
			}
		})
	}
}

// The idempotent operations without a body never read one: whatever is
// sent is ignored and never makes a 5xx.
func TestBodylessOperationsIgnoreHostileBodies(t *testing.T) {
	s := hostileServer(t)
	for _, c := range idempotentCases() {
		path, body, _ := c.prepare(t, s)
		if body != nil {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			for _, raw := range []string{`{"name":"a\u0000b"}`, "\"\xff\"", strings.Repeat("[", 100000), "null", "x"} {
				r := s.Do(t, c.method, path, raw, map[string]string{"Idempotency-Key": key()})
				require.Less(t, r.Status, 500, "%s", r.Body)
				if r.Status >= 400 {
					assertRefused(t, r)
				}
			}
		})
	}
}

func TestNULInAQueryParameterIsRefusedNamingIt(t *testing.T) {
	s := apitest.Memory(t)
	for _, q := range []string{"kind=a%00b", "kind=caf%E9", "status=pending&kind=%00"} {
		r := s.Do(t, "GET", "/v1/operations?"+q, nil, nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s: %s", q, r.Body)
		p := assertRefused(t, r)
		assert.Equal(t, "VALIDATION_FAILED", p.Code)
		assert.Equal(t, []string{"query.kind"}, p.Locations())
	}
	require.Equal(t, http.StatusOK, s.Do(t, "GET", "/v1/operations?kind=caf%C3%A9", nil, nil).Status)
}

func TestIdempotencyKeySentTwiceOrNilIsRefused(t *testing.T) {
	s := apitest.Memory(t)
	send := func(keys ...string) apitest.Response {
		raw, err := json.Marshal(storeBody("twice-" + uuid.NewString()[:8]))
		require.NoError(t, err)
		req, err := http.NewRequest("POST", s.URL+"/v1/stores", bytes.NewReader(raw))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		for _, k := range keys {
			req.Header.Add("Idempotency-Key", k)
		}
		return s.Send(t, req)
	}
	one := key()
	for name, c := range map[string]struct {
		keys []string
		says string
	}{
		"two different keys": {[]string{one, key()}, "send it once"},
		"the same key twice": {[]string{one, one}, "send it once"},
		"nil UUID":           {[]string{uuid.Nil.String()}, "nil"},
		"quoted nil UUID":    {[]string{`"` + uuid.Nil.String() + `"`}, "nil"},
		"max UUID":           {[]string{"ffffffff-ffff-ffff-ffff-ffffffffffff"}, "max"},
	} {
		t.Run(name, func(t *testing.T) {
			r := send(c.keys...)
			require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
			p := assertRefused(t, r)
			assert.Equal(t, "IDEMPOTENCY_KEY_INVALID", p.Code)
			assert.Contains(t, p.Detail, c.says)
		})
	}
	assert.Empty(t, s.Events(t), "nothing executed")
	require.Equal(t, http.StatusCreated, send(one).Status, "one key, once, is fine")
}

func TestSourceURLsMustBePublic(t *testing.T) {
	s := apitest.Memory(t)
	s.Resolver.Set("cdn.supplier.example", "93.184.215.14")
	s.Resolver.Set("metadata.supplier.example", "93.184.215.14", "169.254.169.254")
	s.Resolver.Set("inside.supplier.example", "::ffff:10.0.0.7")
	s.Resolver.Fail("flaky.supplier.example", domain.Errorf(domain.CodeUnavailable, "dns timeout"))
	good := "https://cdn.supplier.example/a.png"
	start := func(urls ...string) apitest.Response {
		return s.Do(t, "POST", "/v1/material-transfers", map[string]any{"source_urls": urls}, map[string]string{"Idempotency-Key": key()})
	}
	for name, c := range map[string]struct {
		url, says string
	}{
		"loopback":                   {"http://127.0.0.1:8080/a.png", "loopback"},
		"IPv6 loopback":              {"http://[::1]/a.png", "loopback"},
		"IPv4-mapped loopback":       {"http://[::ffff:127.0.0.1]/a.png", "loopback"},
		"localhost":                  {"http://localhost/a.png", "loopback"},
		"cloud metadata":             {"http://169.254.169.254/latest/meta-data/", "link-local"},
		"IPv4-mapped metadata":       {"http://[::ffff:a9fe:a9fe]/", "link-local"},
		"private":                    {"http://10.1.2.3/a.png", "private"},
		"private 172.16/12":          {"http://172.20.0.1/a.png", "private"},
		"private 192.168/16":         {"http://192.168.1.1/a.png", "private"},
		"unique local IPv6":          {"http://[fd00::1]/a.png", "private"},
		"link-local IPv6":            {"http://[fe80::1]/a.png", "link-local"},
		"unspecified":                {"http://0.0.0.0/a.png", "unspecified"},
		"carrier-grade NAT":          {"http://100.64.0.1/a.png", "carrier-grade NAT"},
		"multicast":                  {"http://224.0.0.1/a.png", "multicast"},
		"shorthand IPv4":             {"http://2130706433/a.png", "dotted-decimal"},
		"user information":           {"https://user:pw@cdn.supplier.example/a.png", "user name or password"},
		"file scheme":                {"file:///etc/passwd", "http or https"},
		"host resolving to metadata": {"https://metadata.supplier.example/a.png", "resolves to a link-local address"},
		"host resolving inside":      {"https://inside.supplier.example/a.png", "resolves to a private address"},
	} {
		t.Run(name, func(t *testing.T) {
			r := start(good, c.url)
			require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
			p := assertRefused(t, r)
			assert.Equal(t, "VALIDATION_FAILED", p.Code)
			assert.Equal(t, []string{"body.source_urls[1]"}, p.Locations())
			assert.Contains(t, p.Detail, c.says)
			assert.NotContains(t, string(r.Body), "supplier.example", "the URL is never echoed")
		})
	}
	assert.Empty(t, s.Events(t), "nothing refused was started")

	flaky := start(good, "https://flaky.supplier.example/a.png")
	require.Equal(t, http.StatusServiceUnavailable, flaky.Status, "%s", flaky.Body)
	assert.True(t, flaky.Problem(t).RetrySameKey, "the resolver may answer next time")

	ok := start(good, "https://unknown.supplier.example/b.png", "https://93.184.215.14/c.png")
	require.Equal(t, http.StatusAccepted, ok.Status, "public addresses and names that resolve nowhere are accepted: %s", ok.Body)
}

func TestFetchAllowListsOpenPrivateSources(t *testing.T) {
	cfg := apitest.Config("")
	cfg.FetchAllowCIDRs = "10.0.0.0/8"
	cfg.FetchAllowHosts = "minio.internal"
	s := apitest.Start(t, cfg, nil)
	s.Resolver.Set("files.corp.example", "10.4.5.6")
	r := s.Do(t, "POST", "/v1/material-transfers",
		map[string]any{"source_urls": []string{"http://10.0.0.9/a.png", "https://files.corp.example/b.png", "http://minio.internal:9000/c.png"}},
		map[string]string{"Idempotency-Key": key()})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	r = s.Do(t, "POST", "/v1/material-transfers", map[string]any{"source_urls": []string{"http://169.254.169.254/"}},
		map[string]string{"Idempotency-Key": key()})
	require.Equal(t, http.StatusUnprocessableEntity, r.Status, "what is not allowed stays closed: %s", r.Body)
}

// On PostgreSQL a NUL reached the database and came back as 500 INTERNAL
// with retry_same_key true: a client would retry forever.
func TestPostgresNULNeverReachesTheDatabase(t *testing.T) {
	s := apitest.Postgres(t)
	body := storeBody("nul-" + uuid.NewString()[:8])
	body["name"] = "a\x00b"
	r := s.Do(t, "POST", "/v1/stores", body, map[string]string{"Idempotency-Key": key()})
	require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	assert.Equal(t, []string{"body.name"}, assertRefused(t, r).Locations())

	q := s.Do(t, "GET", "/v1/operations?kind=a%00b", nil, nil)
	require.Equal(t, http.StatusUnprocessableEntity, q.Status, "%s", q.Body)
	assert.Equal(t, 0, s.CountRows(t, "stores"))
	assert.Equal(t, 0, s.CountRows(t, "idempotency_requests"))
}
