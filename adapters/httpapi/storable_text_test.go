package httpapi

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnstorableJSONTextNamesTheString(t *testing.T) {
	cases := []struct {
		name, body, location, reason string
	}{
		{"escaped NUL", `{"name":"a\u0000b"}`, "body.name", "NUL"},
		{"NUL in a nested member", `{"platform":"x","credentials":{"api_key":"k","api_secret":"\u0000"}}`, "body.credentials.api_secret", "NUL"},
		{"NUL in an array item", `{"source_urls":["https://a.example/1","https://a.example/\u0000"]}`, "body.source_urls[1]", "NUL"},
		{"after nested values", `{"a":[{"b":1},[2,3],"x"],"c":{"d":null},"e":"\u0000"}`, "body.e", "NUL"},
		{"in an array of arrays", `[[1],["ok","\u0000"]]`, "body[1][1]", "NUL"},
		{"invalid UTF-8", "{\"name\":\"a\xffb\"}", "body.name", "UTF-8"},
		{"truncated UTF-8", "{\"x\":1,\"name\":\"caf\xc3\"}", "body.name", "UTF-8"},
		{"overlong UTF-8", "{\"name\":\"\xc0\xafetc\"}", "body.name", "UTF-8"},
		{"encoded surrogate", "{\"name\":\"\xed\xa0\x80\"}", "body.name", "UTF-8"},
		{"lone high surrogate", `{"name":"a\ud800b"}`, "body.name", "surrogate"},
		{"lone low surrogate", `{"name":"\uDC00"}`, "body.name", "surrogate"},
		{"high surrogate at the end", `{"name":"a\ud83d"}`, "body.name", "surrogate"},
		{"NUL in a member name", `{"ok":1,"a\u0000":1}`, "body", "member name"},
		{"bad member name deeper", "{\"credentials\":{\"\xff\":1}}", "body.credentials", "member name"},
		{"top-level string", `"\u0000"`, "body", "NUL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			detail := unstorableJSONText([]byte(c.body))
			require.NotNil(t, detail, c.body)
			assert.Equal(t, c.location, detail.Location)
			assert.Contains(t, detail.Message, c.reason)
			assert.Nil(t, detail.Value, "the value is never echoed")
		})
	}
	for _, body := range []string{
		`{"name":"plain"}`,
		`{"name":"caf\u00e9 \ud83d\ude00 \\u0000 \\ud800 \"q\" \ufffd ` + "\xef\xbf\xbd" + `"}`,
		`{"name":"日本語"}`,
		`{"n":1e400}`,    // huma refuses it
		`{"name":"a"} x`, // not JSON: huma says so
		"{\"name\":\"a\x00b\"}",
		``, `null`, `[]`, strings.Repeat("[", 100000),
	} {
		assert.Nil(t, unstorableJSONText([]byte(body)), "%q", body)
	}
}

func TestUnstorableQueryNamesTheParameter(t *testing.T) {
	detail := unstorableQuery(url.Values{"kind": {"a\x00"}, "status": {"ok"}})
	require.NotNil(t, detail)
	assert.Equal(t, "query.kind", detail.Location)
	detail = unstorableQuery(url.Values{"kind": {"caf\xe9"}})
	require.NotNil(t, detail)
	assert.Contains(t, detail.Message, "UTF-8")
	detail = unstorableQuery(url.Values{"k\x00": {"v"}})
	require.NotNil(t, detail)
	assert.Equal(t, "query", detail.Location)
	assert.Nil(t, unstorableQuery(url.Values{"kind": {"listing.publish", "café"}}))
}

func TestIsJSON(t *testing.T) {
	for _, ct := range []string{"", "application/json", "application/json; charset=utf-8", "application/problem+json", "Application/JSON"} {
		assert.True(t, isJSON(ct), ct)
	}
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "image/png", "application/json+x", ";;"} {
		assert.False(t, isJSON(ct), ct)
	}
}

// Whatever the body, the check never panics, and when it passes a JSON
// body, no string in it holds a NUL or invalid UTF-8.
func FuzzUnstorableJSONText(f *testing.F) {
	for _, seed := range []string{`{"name":"a\u0000b"}`, "{\"a\":[\"\xff\"]}", `{"a":"\ud800"}`, `[{"a":{"b":["c"]}}]`, `"x"`, `{"a\u0000":1}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		detail := unstorableJSONText(body)
		if detail != nil || !json.Valid(body) {
			return
		}
		if !utf8.Valid(body) {
			t.Fatalf("%q passed with invalid UTF-8", body)
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return
		}
		if hasNUL(v) {
			t.Fatalf("%q passed with a NUL", body)
		}
	})
}

func hasNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.IndexByte(v, 0) >= 0
	case []any:
		for _, e := range v {
			if hasNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.IndexByte(k, 0) >= 0 || hasNUL(e) {
				return true
			}
		}
	}
	return false
}
