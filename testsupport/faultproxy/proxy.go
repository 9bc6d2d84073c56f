// Package faultproxy is a TCP proxy on loopback that tests (and the storm
// bench) take down and bring back, or stall, so a broker outage is a real network outage for the
// client (refused connections, cut streams, a peer that stops answering)
// while the broker itself keeps running for every other test.
package faultproxy

import (
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy forwards 127.0.0.1:<port> to a target address.
type Proxy struct {
	target string
	addr   string

	stalled atomic.Bool

	mu      sync.Mutex
	ln      net.Listener
	conns   map[net.Conn]struct{} // both sides of every open pipe
	clients int                   // client connections open
	wg      sync.WaitGroup
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

// Stall makes the proxy a peer that stops answering: open connections
// stay open but nothing is forwarded any more, either way, and new ones
// are accepted but never reach the target. What clients send is read and
// dropped, so a client that gives up and closes its connection is noticed
// (Conns goes down).
func (p *Proxy) Stall() { p.stalled.Store(true) }

// Resume forwards again. A connection that was open while stalled has
// lost bytes both ways; clients drop those when their calls time out.
func (p *Proxy) Resume() { p.stalled.Store(false) }

// Conns is the number of client connections open through the proxy.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clients
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

// track registers open connections; false once the proxy is down.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	p.clients++
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
	p.clients--
}

func (p *Proxy) pipe(client net.Conn) {
	if p.stalled.Load() {
		if !p.track(client) {
			_ = client.Close()
			return
		}
		defer p.untrack(client)
		p.copy(nil, client)
		return
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	if !p.track(client, server) {
		_ = client.Close()
		_ = server.Close()
		return
	}
	defer p.untrack(client, server)
	done := make(chan struct{}, 2)
	go func() { p.copy(server, client); done <- struct{}{} }()
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
		go func() { p.copy(client, server); done <- struct{}{} }()
	}
	<-done
	<-done
}

// copy forwards src to dst (nil: nowhere) until either fails, dropping
// what it reads while the proxy is stalled, then closes both.
func (p *Proxy) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && dst != nil && !p.stalled.Load() {
			if _, err := dst.Write(buf[:n]); err != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	_ = src.Close()
	if dst != nil {
		_ = dst.Close()
	}
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
