package storm

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"time"
)

// requestTimeout bounds one request of the bench; an answer later than that
// counts as no answer.
const requestTimeout = 30 * time.Second

// client calls the API of one deployment as one user, over as many
// connections as there are requests in flight.
type client struct {
	http  *http.Client
	base  string
	token string
}

// newClient keeps up to conns connections open between requests, so a
// storm's duplicates each have a connection of their own as separate
// clients would.
func newClient(base, token string, conns int) *client {
	tr := &http.Transport{
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	return &client{http: &http.Client{Transport: tr, Timeout: requestTimeout}, base: base, token: token}
}

// answer is what one request got. Status 0 means no answer: the connection
// failed or the request timed out.
type answer struct {
	status     int
	latency    time.Duration
	at         time.Time // when the answer (or the failure) arrived
	replayed   bool
	retryAfter time.Duration
	body       []byte
}

func (a answer) accepted() bool { return a.status >= 200 && a.status < 300 }

// post sends an idempotent JSON request.
func (c *client) post(ctx context.Context, path, key string, body []byte) answer {
	return c.do(ctx, http.MethodPost, path, key, body)
}

// get reads path.
func (c *client) get(ctx context.Context, path string) answer {
	return c.do(ctx, http.MethodGet, path, "", nil)
}

func (c *client) do(ctx context.Context, method, path, key string, body []byte) answer {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return answer{at: time.Now()}
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{latency: time.Since(start), at: time.Now()}
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	a := answer{latency: time.Since(start), at: time.Now(), status: resp.StatusCode, body: respBody,
		replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
	if err != nil {
		a.status = 0
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		a.retryAfter = time.Duration(s) * time.Second
	}
	return a
}

// close drops the idle connections.
func (c *client) close() { c.http.CloseIdleConnections() }
