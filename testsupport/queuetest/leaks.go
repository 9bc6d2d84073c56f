package queuetest

import (
	"bytes"
	"runtime/pprof"
	"strings"
	"testing"
)

// NoGoroutinesIn fails the test if a goroutine runs code of any of pkgs
// (import paths) now. Call it right after a Close that must wait for its
// goroutines: nothing of the package may outlive it.
func NoGoroutinesIn(t testing.TB, pkgs ...string) {
	t.Helper()
	var dump bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&dump, 2); err != nil {
		t.Fatal(err)
	}
	for _, g := range strings.Split(dump.String(), "\n\n") {
		for _, pkg := range pkgs {
			if strings.Contains(g, pkg+".") && !strings.Contains(g, "testing.tRunner") {
				t.Errorf("a goroutine of %s outlived Close:\n%s", pkg, g)
			}
		}
	}
}
