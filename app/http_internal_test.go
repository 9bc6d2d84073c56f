package app

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx/fxtest"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/adapters/prometheus"
)

// serveOnLoopback serves the server the app builds from cfg on a real
// listener (net/http answers 431 itself, before any handler) and returns its
// address.
func serveOnLoopback(t *testing.T, cfg Config) string {
	t.Helper()
	return serveWithShutdown(t, cfg, &Shutdown{log: slog.New(slog.DiscardHandler)})
}

func serveWithShutdown(t *testing.T, cfg Config, sd *Shutdown) string {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	srv, err := newHTTPServer(fxtest.NewLifecycle(t), cfg.HTTPConfig, httpapi.Deps{}, nil, Tracing{}, prometheus.New(nil, nil, log), sd, log)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// getWithHeader sends GET /healthz with one header of size bytes over a raw
// connection and returns the status. The request is written whole before
// the answer is read: the server answers 431 and closes after reading only
// part of it.
func getWithHeader(t *testing.T, addr string, size int) int {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	req := fmt.Sprintf("GET /healthz HTTP/1.1\r\nHost: once\r\nX-Padding: %s\r\nConnection: close\r\n\r\n", strings.Repeat("a", size))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}

func TestOversizedHeadersGet431(t *testing.T) {
	cfg := DefaultConfig()
	cfg.HTTPAddr = "127.0.0.1:0"
	if cfg.HTTPMaxHeaderBytes != 32<<10 {
		t.Fatalf("the documented default is 32768, got %d", cfg.HTTPMaxHeaderBytes)
	}
	addr := serveOnLoopback(t, cfg)
	if got := getWithHeader(t, addr, 16<<10); got != http.StatusOK {
		t.Fatalf("16 KiB of headers: status %d, want 200", got)
	}
	// The cap plus net/http's 4 KiB of slack, and more.
	if got := getWithHeader(t, addr, 40<<10); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("40 KiB of headers: status %d, want 431", got)
	}

	cfg.HTTPMaxHeaderBytes = 8 << 10
	small := serveOnLoopback(t, cfg)
	if got := getWithHeader(t, small, 16<<10); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("16 KiB of headers over an 8 KiB cap: status %d, want 431", got)
	}
}

func TestConfigRefusesAHeaderCapOutOfBounds(t *testing.T) {
	for _, v := range []string{"1024", "2000000"} {
		t.Setenv("ONCE_HTTP_MAX_HEADER_BYTES", v)
		_, err := LoadConfig()
		if err == nil || !strings.Contains(err.Error(), "ONCE_HTTP_MAX_HEADER_BYTES") {
			t.Fatalf("%s: want an error naming the variable, got %v", v, err)
		}
	}
}

func TestConfigRefusesMalformedFetchAllowLists(t *testing.T) {
	t.Setenv("ONCE_FETCH_ALLOW_CIDRS", "10.0.0.0/8,not-a-range")
	t.Setenv("ONCE_FETCH_ALLOW_HOSTS", "minio.internal")
	_, err := LoadConfig()
	if err == nil || !strings.Contains(err.Error(), "ONCE_FETCH_ALLOW_CIDRS") || !strings.Contains(err.Error(), "not-a-range") {
		t.Fatalf("want an error naming the variable and the entry, got %v", err)
	}
}
