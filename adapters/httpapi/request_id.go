package httpapi

import (
	"context"
	"net/http"
	"regexp"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// RequestIDHeader names a request to operators: accepted from the client
// when sane, made up otherwise, and echoed on every response.
const RequestIDHeader = "X-Request-Id"

// requestIDInstancePrefix makes a request id the `instance` URI of a
// problem, so a client reporting a problem quotes the id operators grep for.
const requestIDInstancePrefix = "urn:once:request:"

// requestIDFormat is what an incoming id may be: short, and of characters
// that need no escaping in a log line nor in a URN (the problem's
// `instance`), so a client cannot forge log fields or break the document.
var requestIDFormat = regexp.MustCompile(`^[A-Za-z0-9._~:@+=/-]{1,128}$`)

type requestIDKey struct{}

// RequestIDFrom returns the request id of the HTTP request ctx belongs to,
// or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// requestID gives every request an id: the client's X-Request-Id when it
// is sane (one value, requestIDFormat), a new time-ordered UUID otherwise.
// The id goes into the context (log lines, problems), onto the server
// span, and back to the client in the response header.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := acceptRequestID(r.Header.Values(RequestIDHeader))
		w.Header().Set(RequestIDHeader, id)
		ctx := context.WithValue(r.Context(), requestIDKey{}, id)
		trace.SpanFromContext(ctx).SetAttributes(attribute.String("once.request_id", id))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// acceptRequestID keeps a single sane incoming id and replaces anything
// else.
func acceptRequestID(values []string) string {
	if len(values) == 1 && requestIDFormat.MatchString(values[0]) {
		return values[0]
	}
	if id, err := uuid.NewV7(); err == nil {
		return id.String()
	}
	return uuid.NewString()
}

// problemInstance is a huma transformer: every problem huma writes, the
// handlers' and its own, names the request it answers in `instance`.
func problemInstance(ctx huma.Context, _ string, v any) (any, error) {
	p, ok := v.(*Problem)
	if !ok || p.Instance != "" {
		return v, nil
	}
	named := *p
	named.Instance = instanceOf(ctx.Context())
	return &named, nil
}

// instanceOf is the `instance` of a problem answering the request of ctx.
func instanceOf(ctx context.Context) string {
	if id := RequestIDFrom(ctx); id != "" {
		return requestIDInstancePrefix + id
	}
	return ""
}

// documentRequestID declares the X-Request-Id header once, in the
// components, and refers to it from the success responses of every
// operation. Every response carries it, but a problem already names it in
// `instance`: declaring it on each error status too would only add a typed
// header struct per status to the generated clients.
func documentRequestID(api huma.API) {
	o := api.OpenAPI()
	if o.Components.Headers == nil {
		o.Components.Headers = map[string]*huma.Header{}
	}
	o.Components.Headers[RequestIDHeader] = &huma.Header{
		Description: "The request's id: the client's X-Request-Id when it sent a sane one " +
			"(1 to 128 of A-Z a-z 0-9 . _ ~ : @ + = / -), otherwise a new one. " +
			"Every response carries it, problems also as `instance`; the request's log lines as request_id.",
		Schema:  &huma.Schema{Type: huma.TypeString},
		Example: "0193a4b2-7c1d-7e3f-9a8b-1c2d3e4f5a6b",
	}
	ref := &huma.Param{Ref: "#/components/headers/" + RequestIDHeader}
	for _, item := range o.Paths {
		for _, op := range operationsOf(item) {
			if op == nil {
				continue
			}
			for status, resp := range op.Responses {
				if !strings.HasPrefix(status, "2") {
					continue
				}
				if resp.Headers == nil {
					resp.Headers = map[string]*huma.Param{}
				}
				resp.Headers[RequestIDHeader] = ref
			}
		}
	}
}
