// Package faultproxy is a TCP proxy on loopback that tests (and the storm
// bench) take down and bring back, so a broker outage is a real network
// outage for the client (refused connections, cut streams) while the broker
// itself keeps running for every other test.
package faultproxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards 127.0.0.1:<port> to a target address.
type Proxy struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
	// cuts is how many of the next connections lose their answer.
	cuts int
}

// Start listens on a free loopback port and forwards to target. It is closed
// when the test ends.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	p, err := Listen(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Down)
	return p
}

// Listen is Start for a caller that is not a test (the storm bench cuts its
// broker with it); that caller takes the proxy down with Down when done.
func Listen(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	return p, nil
}

// Addr is host:port of the proxy.
func (p *Proxy) Addr() string { return p.addr }

// Down refuses new connections and cuts the open ones.
func (p *Proxy) Down() {
	p.mu.Lock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = map[net.Conn]struct{}{}
	p.mu.Unlock()
	p.wg.Wait()
}

// Up listens again on the same port.
func (p *Proxy) Up(t testing.TB) {
	t.Helper()
	if err := p.Restore(); err != nil {
		t.Fatal(err)
	}
}

// Restore is Up for a caller that is not a test.
func (p *Proxy) Restore() error {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return fmt.Errorf("proxy up on %s: %w", p.addr, err)
	}
	p.serve(ln)
	return nil
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.pipe(c)
			}()
		}
	}()
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) pipe(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	if !p.track(client) || !p.track(server) {
		_ = client.Close()
		_ = server.Close()
		return
	}
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, err := io.Copy(dst, src)
		if err != nil && !errors.Is(err, net.ErrClosed) {
			_ = err
		}
		_ = dst.Close()
		_ = src.Close()
		done <- struct{}{}
	}
	go cp(server, client)
	if p.takeCut() {
		go func() {
			// The whole request went through; the first byte of the answer
			// means the target did the work. The client gets nothing.
			var first [1]byte
			_, _ = io.ReadFull(server, first[:])
			_ = client.Close()
			_ = server.Close()
			done <- struct{}{}
		}()
	} else {
		go cp(client, server)
	}
	<-done
	<-done
}

// CutNextResponses makes the next n connections lose their answer: the
// request reaches the target, and the connection is cut as the answer
// starts to come back, so the client sees a network error after the target
// did the work.
func (p *Proxy) CutNextResponses(n int) {
	p.mu.Lock()
	p.cuts += n
	p.mu.Unlock()
}

func (p *Proxy) takeCut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cuts == 0 {
		return false
	}
	p.cuts--
	return true
}
