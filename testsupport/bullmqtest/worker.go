package bullmqtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// readyTimeout bounds the worker's start: node, the packages, the Redis
// connections.
const readyTimeout = 60 * time.Second

// Options configure one worker process.
type Options struct {
	RedisURL string
	// Prefix is the BullMQ key prefix once published under.
	Prefix string
	// Queues to consume, one BullMQ Worker each.
	Queues []string
	// Concurrency per queue (default 1: jobs one at a time, oldest first).
	Concurrency int
	// FailFirst makes every job's first attempt throw, so BullMQ retries
	// it by the job's own attempts and backoff options.
	FailFirst bool
	// OpenQueues also opens a BullMQ Queue per queue, as a Node.js
	// producer would: it records its version in the queue's meta hash.
	OpenQueues bool
}

// Job is what the worker reported about one attempt of a job.
type Job struct {
	Event        string          `json:"event"` // "job" (processed) or "failed"
	Queue        string          `json:"queue"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Data         json.RawMessage `json:"data"`
	Opts         json.RawMessage `json:"opts"`
	Priority     int             `json:"priority"`
	Timestamp    int64           `json:"timestamp"`
	AttemptsMade int             `json:"attemptsMade"`
	Reason       string          `json:"reason"`
}

// Worker is a running node/worker.mjs.
type Worker struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{} // closed when stdout ends

	mu        sync.Mutex
	processed []Job
	failed    []Job
	errs      []string
	changed   chan struct{} // closed and replaced on every report
	stderr    bytes.Buffer
}

// StartWorker starts a worker process and waits until its BullMQ Workers
// are connected. It stops with the test.
func StartWorker(t testing.TB, o Options) *Worker {
	t.Helper()
	Require(t)
	if o.Concurrency == 0 {
		o.Concurrency = 1
	}
	cmd := exec.Command("node", "worker.mjs")
	cmd.Dir = NodeDir()
	cmd.Env = append(os.Environ(),
		"BULLMQTEST_REDIS_URL="+o.RedisURL,
		"BULLMQTEST_PREFIX="+o.Prefix,
		"BULLMQTEST_QUEUES="+strings.Join(o.Queues, ","),
		"BULLMQTEST_CONCURRENCY="+strconv.Itoa(o.Concurrency),
	)
	if o.FailFirst {
		cmd.Env = append(cmd.Env, "BULLMQTEST_FAIL_FIRST=1")
	}
	if o.OpenQueues {
		cmd.Env = append(cmd.Env, "BULLMQTEST_OPEN_QUEUES=1")
	}
	w := &Worker{cmd: cmd, done: make(chan struct{}), changed: make(chan struct{})}
	cmd.Stderr = lockedWriter{&w.mu, &w.stderr}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the BullMQ worker: %v", err)
	}
	ready := make(chan struct{})
	go w.read(stdout, ready)
	t.Cleanup(func() { w.stop(t) })

	select {
	case <-ready:
	case <-w.done:
		t.Fatalf("the BullMQ worker exited before it was ready:\n%s", w.Stderr())
	case <-time.After(readyTimeout):
		t.Fatalf("the BullMQ worker was not ready within %s:\n%s", readyTimeout, w.Stderr())
	}
	return w
}

// read parses the worker's report lines until stdout ends.
func (w *Worker) read(stdout io.Reader, ready chan struct{}) {
	defer close(w.done)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var j Job
		if err := json.Unmarshal(sc.Bytes(), &j); err != nil {
			w.report(func() { w.errs = append(w.errs, "unreadable line: "+sc.Text()) })
			continue
		}
		switch j.Event {
		case "ready":
			close(ready)
		case "job":
			w.report(func() { w.processed = append(w.processed, j) })
		case "failed":
			w.report(func() { w.failed = append(w.failed, j) })
		default:
			line := sc.Text()
			w.report(func() { w.errs = append(w.errs, line) })
		}
	}
}

func (w *Worker) report(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f()
	close(w.changed)
	w.changed = make(chan struct{})
}

// Processed returns every job the worker completed so far, in order.
func (w *Worker) Processed() []Job {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Job(nil), w.processed...)
}

// Failed returns every failed attempt so far.
func (w *Worker) Failed() []Job {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Job(nil), w.failed...)
}

// Counts returns how often each job id was processed.
func (w *Worker) Counts() map[string]int {
	counts := map[string]int{}
	for _, j := range w.Processed() {
		counts[j.ID]++
	}
	return counts
}

// Stream sends every job the worker processed, from the first on, until
// ctx ends; then it closes the channel.
func (w *Worker) Stream(ctx context.Context) <-chan Job {
	out := make(chan Job)
	go func() {
		defer close(out)
		for next := 0; ; {
			w.mu.Lock()
			pending, changed := append([]Job(nil), w.processed[next:]...), w.changed
			w.mu.Unlock()
			for _, j := range pending {
				select {
				case out <- j:
					next++
				case <-ctx.Done():
					return
				}
			}
			if len(pending) > 0 {
				continue
			}
			select {
			case <-changed:
			case <-w.done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// WaitProcessed waits until the worker processed every id in ids (at least
// once each), failing t after timeout.
func (w *Worker) WaitProcessed(t testing.TB, timeout time.Duration, ids ...string) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		w.mu.Lock()
		seen := make(map[string]bool, len(w.processed))
		for _, j := range w.processed {
			seen[j.ID] = true
		}
		missing := 0
		for _, id := range ids {
			if !seen[id] {
				missing++
			}
		}
		changed, errs := w.changed, append([]string(nil), w.errs...)
		w.mu.Unlock()
		if missing == 0 {
			return
		}
		select {
		case <-changed:
		case <-w.done:
			t.Fatalf("the BullMQ worker exited with %d of %d jobs missing:\n%s", missing, len(ids), w.Stderr())
		case <-deadline:
			t.Fatalf("the BullMQ worker processed %d of %d jobs within %s; errors: %v\n%s",
				len(ids)-missing, len(ids), timeout, errs, w.Stderr())
		}
	}
}

// Errors returns the worker errors it reported.
func (w *Worker) Errors() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.errs...)
}

// Stderr is what the process wrote on standard error.
func (w *Worker) Stderr() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stderr.String()
}

// stop closes stdin, which makes the worker close its BullMQ Workers and
// exit; it is killed if it does not within 10s.
func (w *Worker) stop(t testing.TB) {
	_ = w.stdin.Close()
	exited := make(chan error, 1)
	go func() { <-w.done; exited <- w.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil && !t.Failed() {
			t.Errorf("the BullMQ worker exited with %v:\n%s", err, w.Stderr())
		}
	case <-time.After(10 * time.Second):
		_ = w.cmd.Process.Kill()
		<-exited
		t.Errorf("the BullMQ worker did not stop within 10s")
	}
	if t.Failed() {
		fmt.Fprintf(os.Stderr, "BullMQ worker stderr:\n%s\n", w.Stderr())
	}
}

// lockedWriter serialises writes to a buffer read under the same lock.
type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
