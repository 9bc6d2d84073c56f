package queuetest

import (
	"bytes"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

// NoGoroutinesIn fails the test if a goroutine runs code of any of pkgs
// (import paths) once those that have finished their work have exited.
// Call it right after a Close that must wait for its goroutines: nothing
// of the package may outlive it.
//
// A goroutine Close waited for has signalled its end (a WaitGroup's Done,
// a deferred close) before it returns, so for a moment after Close it may
// still be listed, runnable on its last line; nothing can synchronise
// with a goroutine's exit itself. The check therefore looks again, giving
// the scheduler its turn, until none is left or settle has passed: a
// goroutine that is blocked, or still working, stays listed and fails it.
func NoGoroutinesIn(t testing.TB, pkgs ...string) {
	t.Helper()
	const settle = 10 * time.Second
	deadline := time.Now().Add(settle)
	for {
		left := goroutinesIn(t, pkgs)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, g := range left {
				t.Errorf("a goroutine outlived Close:\n%s", g)
			}
			return
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// goroutinesIn lists the stacks of the goroutines running code of pkgs,
// but the test's own.
func goroutinesIn(t testing.TB, pkgs []string) []string {
	t.Helper()
	var dump bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&dump, 2); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, g := range strings.Split(dump.String(), "\n\n") {
		for _, pkg := range pkgs {
			if strings.Contains(g, pkg+".") && !strings.Contains(g, "testing.tRunner") {
				left = append(left, g)
				break
			}
		}
	}
	return left
}
