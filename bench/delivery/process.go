package delivery

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// child is a Dispatcher process of a measurement (RunDispatcherChild).
type child struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	ready   chan struct{}
	settled atomic.Int64
	changed chan struct{} // a settled count came in (coalesced, shared by the children)
	rss     atomic.Int64
	stats   atomic.Pointer[string] // the child's "stats" line
	exited  chan struct{}
	err     error
}

func startChild(ctx context.Context, binary string, cfg ChildConfig, changed chan struct{}) (*child, error) {
	args := []string{"dispatcher-child",
		"--app-dsn", cfg.AppDSN, "--queue", cfg.Queue, "--prefix", cfg.Prefix, "--owner", cfg.Owner,
		"--batch", strconv.Itoa(cfg.Batch), "--concurrency", strconv.Itoa(cfg.Concurrency),
		"--redis-url", cfg.RedisURL, "--amqp-url", cfg.AMQPURL, "--cpuprofile", cfg.CPUProfile}
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start a dispatcher process: %w", err)
	}
	c := &child{cmd: cmd, stdin: stdin, ready: make(chan struct{}), changed: changed, exited: make(chan struct{})}
	go func() {
		var once sync.Once
		in := bufio.NewScanner(stdout)
		for in.Scan() {
			line := in.Text()
			switch {
			case line == "ready":
				once.Do(func() { close(c.ready) })
			case strings.HasPrefix(line, "settled "):
				n, _ := strconv.ParseInt(strings.TrimPrefix(line, "settled "), 10, 64)
				c.settled.Store(n)
				select {
				case c.changed <- struct{}{}:
				default:
				}
			case strings.HasPrefix(line, "stats "):
				st := strings.TrimPrefix(line, "stats ")
				c.stats.Store(&st)
			case strings.HasPrefix(line, "rss "):
				n, _ := strconv.ParseInt(strings.TrimPrefix(line, "rss "), 10, 64)
				c.rss.Store(n)
			}
		}
		c.err = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

func (c *child) start() error {
	_, err := io.WriteString(c.stdin, "go\n")
	return err
}

// stop ends the process's stdin and waits for it; again, it only says
// how it ended.
func (c *child) stop() error {
	_ = c.stdin.Close()
	<-c.exited
	return c.err
}
