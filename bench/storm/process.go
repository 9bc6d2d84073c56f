package storm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long a process has to stop after SIGTERM before it is
// killed.
const stopGrace = 15 * time.Second

// process is one long-running `once` subprocess (serve, dispatch, work),
// its output in a log file of its own.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error // set before done closes
	stopped bool  // stopped by the bench, not exited on its own
}

// startProcess starts bin with args and env, writing its output to logPath.
func startProcess(name, bin string, env environment, logPath string, args ...string) (*process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env.list()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// alive reports whether the process is still running.
func (p *process) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// state says how the process is: "running", or how it ended.
func (p *process) state() string {
	if p.alive() {
		return "running"
	}
	if p.waitErr == nil {
		return "exited 0"
	}
	return p.waitErr.Error()
}

// stop sends SIGTERM, waits stopGrace, then kills. It is a no-op on a
// process that already ended.
func (p *process) stop() {
	if !p.alive() {
		return
	}
	p.stopped = true
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopGrace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// kill sends SIGKILL and waits; a no-op on a process that already ended.
func (p *process) kill() {
	if !p.alive() {
		return
	}
	p.stopped = true
	_ = p.cmd.Process.Kill()
	<-p.done
}

// logTail is the end of the process's output, for error messages.
func (p *process) logTail() string { return tail(p.logPath, 2000) }

// runOnce runs a short `once` command (workspace create, token) and returns
// its standard output, trimmed.
func runOnce(ctx context.Context, bin string, env environment, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env.list()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("once %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// tail is the last n bytes of a file.
func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(0, st.Size()-n)
	buf := make([]byte, st.Size()-off)
	got, _ := f.ReadAt(buf, off) // a short read still says something
	return string(buf[:got])
}

// processState is how one process of a scenario ended up.
type processState struct {
	Name  string
	State string // "running", or how it ended on its own
}

func states(procs []*process) []processState {
	out := make([]processState, len(procs))
	for i, p := range procs {
		out[i] = processState{Name: p.name, State: p.state()}
	}
	return out
}
