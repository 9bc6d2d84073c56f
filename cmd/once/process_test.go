package main

import (
	"context"
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
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/testsupport/redistest"
	"github.com/oncehq/once/testsupport/testkit"
)

// The subprocesses the tests start are the binary itself, built once per
// test run without the race detector (it would slow the workers under
// test tenfold), so that they can be killed -9 like the real thing. The
// crash tests of the relay also build it with the oncetest tag, which adds
// their kill points (app/relay_hooks_oncetest.go).
var binary struct {
	mu    sync.Mutex
	dir   string
	built map[string]string // path by build tags
}

func TestMain(m *testing.M) {
	code := redistest.Main(m) // and stops the private Redis Cluster, if a test started it
	if binary.dir != "" {
		_ = os.RemoveAll(binary.dir)
	}
	os.Exit(code)
}

// onceBinary builds `once` (the package under test) on first use.
func onceBinary(t *testing.T) string { return buildOnce(t, "") }

// onceTestBinary builds `once` with the oncetest tag on first use.
func onceTestBinary(t *testing.T) string { return buildOnce(t, "oncetest") }

func buildOnce(t *testing.T, tags string) string {
	t.Helper()
	binary.mu.Lock()
	defer binary.mu.Unlock()
	if path, ok := binary.built[tags]; ok {
		return path
	}
	if binary.dir == "" {
		dir, err := os.MkdirTemp("", "once-bin-")
		require.NoError(t, err)
		binary.dir, binary.built = dir, map[string]string{}
	}
	path := filepath.Join(binary.dir, "once"+tags)
	out, err := exec.Command("go", "build", "-tags="+tags, "-o", path, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	binary.built[tags] = path
	return path
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
	return startBinary(t, onceBinary(t), env, args...)
}

// startBinary is startOnce with the binary at path.
func startBinary(t *testing.T, path string, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(path, args...)
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

// handedOut remembers every address freeAddr gave in this test binary.
var handedOut = struct {
	sync.Mutex
	addrs map[string]bool
}{addrs: map[string]bool{}}

// freeAddr returns a loopback address with a port nobody listens on now,
// and never one it returned before: the port is closed again at once so
// that a process can take it, and the kernel may then offer the same port
// to the next caller (a simulator and a worker's ops listener were given
// one port, and the second failed with "address already in use").
func freeAddr(t *testing.T) string {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		require.NoError(t, ln.Close())
		if !handedOut.addrs[addr] {
			handedOut.addrs[addr] = true
			return addr
		}
	}
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
		for _, k := range kinds.All {
			if err := amqp.DeleteTopology(conn, queue.Topic(prefix, k.EventType)); err != nil {
				t.Logf("%v", err)
			}
		}
	})
}
