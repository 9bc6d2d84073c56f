package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/oncehq/once/testsupport/testkit"
)

// Bounds of a server's start: tries on fresh ports, and how long one try
// waits for the server to answer.
const (
	startTries   = 5
	startTimeout = 10 * time.Second
)

// server is one redis-server process of the package.
type server struct {
	addr   string
	cmd    *exec.Cmd
	exited chan struct{}      // closed when the process ended
	output *testkit.LogBuffer // what it wrote, for a failed start
}

// freePorts asks the kernel for n free loopback ports. Another process may
// take one before the server binds it: startServer then tries new ones.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// startServer starts redis-server with the arguments args builds for
// nPorts free ports (the first is the one clients use) and waits until it
// answers PING. A server that does not come up (a port taken in the
// meantime) is stopped and started again on new ports.
func startServer(nPorts int, args func(ports []int) ([]string, error)) (*server, error) {
	var errs []error
	for range startTries {
		ports, err := freePorts(nPorts)
		if err != nil {
			return nil, err
		}
		argv, err := args(ports)
		if err != nil {
			return nil, err
		}
		s, err := run(net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])), argv)
		if err == nil {
			track(s)
			return s, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

func run(addr string, argv []string) (*server, error) {
	cmd := exec.Command("redis-server", argv...)
	out := &testkit.LogBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{addr: addr, cmd: cmd, exited: make(chan struct{}), output: out}
	go func() { _ = cmd.Wait(); close(s.exited) }()

	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return s, nil
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("redis-server on %s exited: %s", addr, out.String())
		default:
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("redis-server on %s did not answer within %s: %v\n%s", addr, startTimeout, err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// client is a plain client of the server (not of the topology it is part of).
func (s *server) client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.addr, DialTimeout: time.Second})
}

// stop kills the server and waits for it: the tests are done with its data.
func (s *server) stop() {
	_ = s.cmd.Process.Kill()
	<-s.exited
}
