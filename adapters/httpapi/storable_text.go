package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
)

// refuseUnstorableText answers 422 VALIDATION_FAILED, naming the field
// (body.name, body.source_urls[1], query.kind), when a query parameter or a
// string anywhere in a JSON request body holds text no store can keep: the
// NUL character (\u0000, which PostgreSQL text and jsonb refuse), bytes that
// are not UTF-8, or a lone UTF-16 surrogate escape. It is one check for every
// operation, run before huma decodes anything, on the bytes as received:
// decoding would already have replaced invalid UTF-8 with U+FFFD.
//
// Bodies of other media types (an uploaded image) are not looked at, nor a
// body over the operation's cap: huma answers 413 for it as before.
func refuseUnstorableText(api huma.API) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		u := ctx.URL()
		if detail := unstorableQuery(u.Query()); detail != nil {
			_ = huma.WriteErr(api, ctx, http.StatusUnprocessableEntity, "validation failed", detail)
			return
		}
		op := ctx.Operation()
		if op == nil || !takesJSON(op) || !isJSON(ctx.Header("Content-Type")) {
			next(ctx)
			return
		}
		limit := op.MaxBodyBytes
		if limit <= 0 {
			limit = DefaultMaxBodyBytes
		}
		body, readErr := io.ReadAll(io.LimitReader(ctx.BodyReader(), limit))
		if readErr == nil && int64(len(body)) < limit {
			if detail := unstorableJSONText(body); detail != nil {
				_ = huma.WriteErr(api, ctx, http.StatusUnprocessableEntity, "validation failed", detail)
				return
			}
		}
		// huma reads the body again from what was read here, then meets the
		// same size or read error it would have met itself.
		rest := io.Reader(bytes.NewReader(body))
		if readErr != nil {
			rest = io.MultiReader(rest, errReader{readErr})
		}
		next(&bufferedBody{humaContext: ctx, body: rest})
	}
}

// bufferedBody is the request's context with its body already read.
type bufferedBody struct {
	humaContext
	body io.Reader
}

// humaContext lets bufferedBody embed huma.Context under a name that does
// not hide its Context method.
type humaContext = huma.Context

func (c *bufferedBody) BodyReader() io.Reader { return c.body }

// Unwrap lets humago.Unwrap reach the request under this context.
func (c *bufferedBody) Unwrap() huma.Context { return c.humaContext }

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// takesJSON reports whether op has a JSON request body.
func takesJSON(op *huma.Operation) bool {
	if op.RequestBody == nil {
		return false
	}
	_, ok := op.RequestBody.Content["application/json"]
	return ok
}

// isJSON reports whether a request of this Content-Type is decoded as JSON:
// none (huma's default), application/json or a +json type. Anything else
// is huma's to refuse with 415.
func isJSON(contentType string) bool {
	if strings.TrimSpace(contentType) == "" {
		return true
	}
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mediaType == "application/json" || strings.HasSuffix(mediaType, "+json"))
}

// unstorableQuery finds the first query parameter, in name order, whose
// name or value is not storable text.
func unstorableQuery(query url.Values) *huma.ErrorDetail {
	names := make([]string, 0, len(query))
	for name := range query {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if reason := unstorableString(name); reason != "" {
			return &huma.ErrorDetail{Location: "query", Message: "a parameter name " + reason}
		}
		for _, value := range query[name] {
			if reason := unstorableString(value); reason != "" {
				return &huma.ErrorDetail{Location: "query." + name, Message: "the value " + reason}
			}
		}
	}
	return nil
}

func unstorableString(s string) string {
	switch {
	case strings.IndexByte(s, 0) >= 0:
		return "must not contain the NUL character (\\u0000)"
	case !utf8.ValidString(s):
		return "must be valid UTF-8"
	}
	return ""
}

// unstorableJSONText finds the first JSON string (member names included)
// that is not storable text and says where it is, in huma's location form.
// It returns nil when there is none, and when the body is not JSON at all:
// huma's own parse says what is wrong with it.
func unstorableJSONText(body []byte) *huma.ErrorDetail {
	if utf8.Valid(body) && !bytes.Contains(body, []byte(`\u`)) {
		return nil // the common case: no escapes, nothing to look into
	}
	w := jsonWalk{dec: json.NewDecoder(bytes.NewReader(body))}
	w.dec.UseNumber()
	var prev int64
	for {
		tok, err := w.dec.Token()
		if err != nil {
			return nil // end of input, or not JSON
		}
		end := w.dec.InputOffset()
		// raw holds the token as sent, after the separators before it (all
		// ASCII): the only place invalid UTF-8 can still be seen.
		raw := body[prev:end]
		prev = end
		switch t := tok.(type) {
		case json.Delim:
			w.delim(t)
		case string:
			reason := unstorableJSONString(t, raw)
			if w.expectingKey() {
				if reason != "" {
					return &huma.ErrorDetail{Location: w.location(), Message: "a member name " + reason}
				}
				w.key(t)
				continue
			}
			if reason != "" {
				return &huma.ErrorDetail{Location: w.location(), Message: reason}
			}
			w.value()
		default:
			w.value()
		}
	}
}

// unstorableJSONString judges one string token: decoded is what
// encoding/json made of it, raw the bytes it was decoded from.
func unstorableJSONString(decoded string, raw []byte) string {
	switch {
	case strings.IndexByte(decoded, 0) >= 0:
		return "must not contain the NUL character (\\u0000)"
	case !utf8.Valid(raw):
		return "must be valid UTF-8"
	case strings.ContainsRune(decoded, utf8.RuneError) && hasLoneSurrogate(raw):
		return "must be valid UTF-8 (it holds a lone UTF-16 surrogate escape)"
	}
	return ""
}

// hasLoneSurrogate reports whether a JSON string literal escapes half of a
// UTF-16 surrogate pair without the other half (\ud800 alone), which
// encoding/json silently turns into U+FFFD.
func hasLoneSurrogate(raw []byte) bool {
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
		return rune(v), err == nil
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		r, ok := hex4(i)
		if !ok {
			i++ // a two-character escape such as \\ or \"
			continue
		}
		switch {
		case r >= 0xD800 && r < 0xDC00:
			if low, ok := hex4(i + 6); ok && low >= 0xDC00 && low < 0xE000 {
				i += 11
				continue
			}
			return true
		case r >= 0xDC00 && r < 0xE000:
			return true
		}
		i += 5
	}
	return false
}

// jsonWalk follows where a token stream is, to name a location the way huma
// does: body.credentials.api_key, body.source_urls[1].
type jsonWalk struct {
	dec   *json.Decoder
	stack []jsonFrame
}

type jsonFrame struct {
	object  bool
	wantKey bool
	key     string
	index   int
}

func (w *jsonWalk) delim(d json.Delim) {
	switch d {
	case '{':
		w.stack = append(w.stack, jsonFrame{object: true, wantKey: true})
	case '[':
		w.stack = append(w.stack, jsonFrame{})
	default: // '}' or ']': the container was a value of its parent
		w.stack = w.stack[:len(w.stack)-1]
		w.value()
	}
}

func (w *jsonWalk) expectingKey() bool {
	return len(w.stack) > 0 && w.stack[len(w.stack)-1].wantKey
}

func (w *jsonWalk) key(k string) {
	top := &w.stack[len(w.stack)-1]
	top.key, top.wantKey = k, false
}

// value moves past one value of the innermost container.
func (w *jsonWalk) value() {
	if len(w.stack) == 0 {
		return
	}
	top := &w.stack[len(w.stack)-1]
	if top.object {
		top.wantKey = true
	} else {
		top.index++
	}
}

// location is where the walk is; while a member name is expected, the
// object holding it.
func (w *jsonWalk) location() string {
	var b strings.Builder
	b.WriteString("body")
	for _, f := range w.stack {
		switch {
		case f.object && f.wantKey:
		case f.object:
			b.WriteString(".")
			b.WriteString(f.key)
		default:
			b.WriteString("[")
			b.WriteString(strconv.Itoa(f.index))
			b.WriteString("]")
		}
	}
	return b.String()
}
