package benchstorm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httputil"
	"net/url"
	"strconv"
	"time"
)

// loadConn is one keep-alive connection of the write-path load: requests
// written as prepared bytes and answers read with no more parsing than
// the bench needs (status, Content-Length or chunked, Idempotent-Replayed).
// pgbench, the figure the HTTP path is held against, is a light C client;
// net/http's client took a third of the service's own CPU per request on
// the same two cores (two goroutines and a hand-off per request), which
// the service and PostgreSQL then lacked. One connection is used by one
// goroutine.
type loadConn struct {
	conn  net.Conn
	r     *bufio.Reader
	host  string
	token string
	req   []byte // reused for each request
	body  []byte // the last answer's body, reused
}

// dialLoad opens one connection to the service at base (http://host:port).
// The connection is closed when ctx ends, which ends a request in flight.
func dialLoad(ctx context.Context, base, token string) (*loadConn, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("load connection: %q is not an http:// address", base)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, fmt.Errorf("load connection: %w", err)
	}
	c := &loadConn{conn: conn, r: bufio.NewReaderSize(conn, 16<<10), host: u.Host, token: token}
	context.AfterFunc(ctx, func() { _ = conn.Close() })
	return c, nil
}

// post sends one JSON POST (with an Idempotency-Key unless key is empty)
// and reads its answer. a.body is valid until the next call.
func (c *loadConn) post(path, key string, body []byte) (answer, error) {
	start := time.Now()
	_ = c.conn.SetDeadline(start.Add(requestTimeout))
	b := c.req[:0]
	b = append(b, "POST "...)
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, c.host...)
	b = append(b, "\r\nAuthorization: Bearer "...)
	b = append(b, c.token...)
	b = append(b, "\r\nContent-Type: application/json\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	if key != "" {
		b = append(b, "\r\nIdempotency-Key: "...)
		b = append(b, key...)
	}
	b = append(b, "\r\n\r\n"...)
	b = append(b, body...)
	c.req = b
	if _, err := c.conn.Write(b); err != nil {
		return answer{}, fmt.Errorf("load connection: send: %w", err)
	}
	a, err := c.read()
	a.latency, a.at = time.Since(start), time.Now()
	return a, err
}

var (
	headerContentLength    = []byte("content-length:")
	headerTransferEncoding = []byte("transfer-encoding:")
	headerReplayed         = []byte("idempotent-replayed:")
)

// read reads one answer: the status line, the headers the bench looks at,
// and the body.
func (c *loadConn) read() (answer, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return answer{}, fmt.Errorf("load connection: status line: %w", err)
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return answer{}, fmt.Errorf("load connection: not an HTTP/1.1 status line: %q", line)
	}
	var a answer
	if a.status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return answer{}, fmt.Errorf("load connection: status %q", line[9:12])
	}
	length, chunked := -1, false
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return answer{}, fmt.Errorf("load connection: headers: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		name = append(bytes.ToLower(name), ':')
		value = bytes.TrimSpace(value)
		switch {
		case bytes.Equal(name, headerContentLength):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return answer{}, fmt.Errorf("load connection: Content-Length %q", value)
			}
		case bytes.Equal(name, headerTransferEncoding):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.Equal(name, headerReplayed):
			a.replayed = string(value) == "true"
		}
	}
	switch {
	case chunked:
		c.body, err = io.ReadAll(httputil.NewChunkedReader(c.r))
		if err == nil {
			// The chunked reader stops at the last chunk; what follows is
			// the (empty) trailer and its blank line.
			_, err = c.r.Discard(2)
		}
	case length >= 0:
		if cap(c.body) < length {
			c.body = make([]byte, length)
		}
		c.body = c.body[:length]
		_, err = io.ReadFull(c.r, c.body)
	default:
		err = errors.New("an answer with neither Content-Length nor chunked encoding")
	}
	if err != nil {
		return answer{}, fmt.Errorf("load connection: body: %w", err)
	}
	a.body = c.body
	return a, nil
}

func (c *loadConn) close() { _ = c.conn.Close() }
