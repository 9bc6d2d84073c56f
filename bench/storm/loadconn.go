package storm

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
	ctx   context.Context
	conn  net.Conn
	r     *bufio.Reader
	host  string
	token string
	req   []byte // reused for each request
	body  []byte // the last answer's body, reused
	// closing is set by an answer with Connection: close: the server
	// closes after it, so the next request dials again.
	closing bool
}

// dialLoad opens one connection to the service at base (http://host:port).
// The connection is closed when ctx ends, which ends a request in flight.
func dialLoad(ctx context.Context, base, token string) (*loadConn, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("load connection: %q is not an http:// address", base)
	}
	c := &loadConn{ctx: ctx, host: u.Host, token: token}
	return c, c.dial()
}

func (c *loadConn) dial() error {
	var d net.Dialer
	conn, err := d.DialContext(c.ctx, "tcp", c.host)
	if err != nil {
		return fmt.Errorf("load connection: %w", err)
	}
	c.conn, c.closing = conn, false
	if c.r == nil {
		c.r = bufio.NewReaderSize(conn, 16<<10)
	} else {
		c.r.Reset(conn)
	}
	context.AfterFunc(c.ctx, func() { _ = conn.Close() })
	return nil
}

// post sends one JSON POST (with an Idempotency-Key unless key is empty)
// and reads its answer. a.body is valid until the next call.
func (c *loadConn) post(path, key string, body []byte) (answer, error) {
	if c.closing {
		_ = c.conn.Close()
		if err := c.dial(); err != nil {
			return answer{}, err
		}
	}
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
	headerContentLength    = []byte("Content-Length")
	headerTransferEncoding = []byte("Transfer-Encoding")
	headerReplayed         = []byte("Idempotent-Replayed")
	headerConnection       = []byte("Connection")
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
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, headerContentLength):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return answer{}, fmt.Errorf("load connection: Content-Length %q", value)
			}
		case bytes.EqualFold(name, headerTransferEncoding):
			// Go's server sends chunked alone; anything else is refused
			// below rather than misread.
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, headerReplayed):
			a.replayed = string(value) == "true"
		case bytes.EqualFold(name, headerConnection):
			c.closing = bytes.EqualFold(value, []byte("close"))
		}
	}
	switch {
	case a.status == 204 || a.status == 304:
		c.body = c.body[:0] // no body, whatever the headers say
	case chunked:
		c.body, err = io.ReadAll(httputil.NewChunkedReader(c.r))
		// The chunked reader stops after the last chunk; the trailer
		// follows, up to a blank line.
		for err == nil {
			var line []byte
			if line, err = c.r.ReadSlice('\n'); err == nil && len(bytes.TrimRight(line, "\r\n")) == 0 {
				break
			}
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
