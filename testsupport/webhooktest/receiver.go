// Package webhooktest runs a webhook receiver written with the stock
// standardwebhooks npm package (node/receiver.mjs, its version pinned in
// node/package.json), so a test shows that what once sends verifies with
// a library that is not ours. The Node.js packages are installed the
// first time a test needs them (nodetest).
package webhooktest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oncehq/once/testsupport/nodetest"
)

// waitTimeout bounds the wait for the receiver to listen and for each
// verdict: generous, for a loaded machine.
const waitTimeout = 30 * time.Second

// Verdict is the receiver's check of one request.
type Verdict struct {
	ID    string `json:"id"`
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	// First is false for a webhook-id that verified before.
	First bool `json:"first"`
}

// Receiver is a running receiver process.
type Receiver struct {
	// URL is where it listens (http://127.0.0.1:port/).
	URL      string
	verdicts chan Verdict
	stderr   strings.Builder
	mu       sync.Mutex
}

func nodeDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "node")
}

// Start runs a receiver holding secret (whsec_...). It stops with the test.
func Start(t testing.TB, secret string) *Receiver {
	t.Helper()
	nodetest.Require(t, nodeDir(), "the webhook tests need a receiver written with the standardwebhooks npm package")
	cmd := exec.Command("node", "receiver.mjs")
	cmd.Dir = nodeDir()
	cmd.Env = append(os.Environ(), "WEBHOOK_SECRET="+secret)
	r := &Receiver{verdicts: make(chan Verdict, 1024)}
	cmd.Stderr = lockedWriter{r}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the webhook receiver: %v", err)
	}
	t.Cleanup(func() {
		_ = stdin.Close() // the receiver exits when its stdin ends
		if err := cmd.Wait(); err != nil {
			t.Errorf("the webhook receiver: %v\n%s", err, r.Stderr())
		}
	})
	ports := make(chan int, 1)
	go r.read(stdout, ports)
	select {
	case port, ok := <-ports:
		if !ok {
			t.Fatalf("the webhook receiver exited before it listened:\n%s", r.Stderr())
		}
		r.URL = fmt.Sprintf("http://127.0.0.1:%d/", port)
	case <-time.After(waitTimeout):
		t.Fatalf("the webhook receiver did not listen within %s:\n%s", waitTimeout, r.Stderr())
	}
	return r
}

// Next is the verdict on the next request the receiver got.
func (r *Receiver) Next(t testing.TB) Verdict {
	t.Helper()
	select {
	case v, ok := <-r.verdicts:
		if !ok {
			t.Fatalf("the webhook receiver exited:\n%s", r.Stderr())
		}
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("no verdict from the webhook receiver within %s:\n%s", waitTimeout, r.Stderr())
		return Verdict{}
	}
}

// Stderr is what the receiver wrote to its standard error.
func (r *Receiver) Stderr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stderr.String()
}

// read parses the receiver's lines: its port first, then a verdict a line.
func (r *Receiver) read(stdout io.Reader, ports chan<- int) {
	defer close(r.verdicts)
	sc := bufio.NewScanner(stdout)
	first := true
	for sc.Scan() {
		if first {
			first = false
			var p struct{ Port int }
			if json.Unmarshal(sc.Bytes(), &p) == nil && p.Port > 0 {
				ports <- p.Port
			}
			close(ports)
			continue
		}
		var v Verdict
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			v = Verdict{Error: "unreadable line: " + sc.Text()}
		}
		r.verdicts <- v
	}
	if first {
		close(ports)
	}
}

type lockedWriter struct{ r *Receiver }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	return w.r.stderr.Write(p)
}
