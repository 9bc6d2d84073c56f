package storm

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The write-path load's own client against net/http's server: what it
// sends arrives as a well-formed request, and what it reads of answers
// with a length, chunked answers and a replay header is what was sent,
// request after request on one connection.
func TestLoadConnSpeaksHTTPOnOneConnection(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		assert.Equal(t, http.MethodPost, r.Method)
		assert.Equal(t, "Bearer tok", r.Header.Get("Authorization"))
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
		switch r.URL.Path {
		case "/chunked":
			w.Header().Set("Idempotent-Replayed", "true")
			w.Header().Set("Trailer", "X-Checked")
			w.WriteHeader(http.StatusCreated)
			w.(http.Flusher).Flush() // no length known: chunked
			_, _ = w.Write([]byte("key=" + r.Header.Get("Idempotency-Key")))
			w.Header().Set("X-Checked", "yes") // a trailer after the last chunk
		case "/close":
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte("bye"))
		default:
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write(body)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := dialLoad(ctx, srv.URL, "tok")
	require.NoError(t, err)
	defer c.close()

	for i := range 3 {
		a, err := c.post("/echo", "", []byte(`{"n":`+strings.Repeat("1", i+1)+`}`))
		require.NoError(t, err)
		assert.Equal(t, http.StatusAccepted, a.status)
		assert.False(t, a.replayed)
		assert.Equal(t, `{"n":`+strings.Repeat("1", i+1)+`}`, string(a.body))

		a, err = c.post("/chunked", "k-1", []byte(`{}`))
		require.NoError(t, err)
		assert.Equal(t, http.StatusCreated, a.status)
		assert.True(t, a.replayed)
		assert.Equal(t, "key=k-1", string(a.body))
	}

	assert.Equal(t, int32(1), conns.Load(), "every request on the one connection")

	// An answer with Connection: close is read, and the next request goes
	// on a new connection.
	a, err := c.post("/close", "", []byte(`{}`))
	require.NoError(t, err)
	assert.Equal(t, http.StatusConflict, a.status)
	assert.Equal(t, "bye", string(a.body))
	a, err = c.post("/echo", "", []byte(`{"again":true}`))
	require.NoError(t, err)
	assert.Equal(t, `{"again":true}`, string(a.body))
	assert.Equal(t, int32(2), conns.Load(), "a second connection after the close")

	// The server going away is an error, not an answer.
	srv.CloseClientConnections()
	_, err = c.post("/echo", "", []byte(`{}`))
	assert.Error(t, err)
}

func TestDialLoadRefusesAnAddressThatIsNotHTTP(t *testing.T) {
	_, err := dialLoad(context.Background(), "https://127.0.0.1:1", "tok")
	assert.Error(t, err)
}
