package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/amqp"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/testsupport/redistest"
	"github.com/oncehq/once/testsupport/testkit"
)

// The subprocesses the tests start are the binary itself, built once per
// test run without the race detector (it would slow the workers under
// test tenfold), so that they can be killed -9 like the real thing.
var binary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := redistest.Main(m) // and stops the private Redis Cluster, if a test started it
	if binary.dir != "" {
		_ = os.RemoveAll(binary.dir)
	}
	os.Exit(code)
}

// onceBinary builds `once` (the package under test) on first use.
func onceBinary(t *testing.T) string {
	t.Helper()
	binary.once.Do(func() {
		if binary.dir, binary.err = os.MkdirTemp("", "once-bin-"); binary.err != nil {
			return
		}
		binary.path = filepath.Join(binary.dir, "once")
		if out, err := exec.Command("go", "build", "-o", binary.path, ".").CombinedOutput(); err != nil {
			binary.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	require.NoError(t, binary.err)
	return binary.path
}

// process is `once` running as a subprocess.
type process struct {
	cmd    *exec.Cmd
	output *testkit.LogBuffer
	done   chan struct{}
}

// startOnce runs `once args...` with env added to the test's environment.
// Its ops listener takes any free port unless env sets ONCE_OPS_ADDR: the
// defaults are fixed ports, and tests run side by side.
func startOnce(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(onceBinary(t), args...)
	cmd.Env = append(append(os.Environ(), "ONCE_OPS_ADDR=127.0.0.1:0"), env...)
	out := &testkit.LogBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	p := &process{cmd: cmd, output: out, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("once %v output:\n%s", args, out.String())
		}
	})
	return p
}

// kill ends the process with SIGKILL (kill -9: no cleanup of any kind) and
// waits until it is gone.
func (p *process) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// waitHealthy waits until url answers 200.
func waitHealthy(t *testing.T, p *process, url string) {
	t.Helper()
	require.Eventually(t, func() bool {
		select {
		case <-p.done:
			t.Fatalf("exited before serving:\n%s", p.output.String())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		_ = res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, 60*time.Second, 20*time.Millisecond, "%s healthy", url)
}

// runOnce runs `once args...` to completion and returns its output.
func runOnce(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(onceBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "once %v: %s", args, out)
	return string(out)
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err, "%q", s)
	return n
}

// deleteAMQPTopicsLater deletes, when the test ends and after the processes
// it starts later have stopped, the queues (with their dead-letter queues)
// and exchanges `once work` declares under prefix: RabbitMQ is shared, and
// quorum queues are not free to keep.
func deleteAMQPTopicsLater(t *testing.T, amqpURL, prefix string) {
	t.Cleanup(func() {
		conn, err := amqp091.Dial(amqpURL)
		if err != nil {
			t.Logf("delete the test's queues: %v", err)
			return
		}
		defer conn.Close()
		for _, eventType := range app.EventTypes() {
			if err := amqp.DeleteTopology(conn, queue.Topic(prefix, eventType)); err != nil {
				t.Logf("%v", err)
			}
		}
	})
}
