package main

import (
	"bytes"
	"cmp"
	"errors"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oncehq/once/testsupport/redistest"
)

// A process that cannot start says what failed in one plain line on
// standard error and exits non-zero: the address in use, the database or
// the broker that cannot be reached (with its address, never a password),
// not fx's chain of constructors. The binary is built and run as an
// operator would; ONCE_LOG_LEVEL=error keeps the start-up log lines out of
// the way, so standard error is that one line.
func TestStartupFailuresAreOneLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "once")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	closed := closedAddr(t)
	redis := liveRedis(t)
	clusterNode := redistest.Cluster(t).NodeURL()
	rabbit := liveRabbitMQ(t)

	const password = "hunter2-not-for-logs"
	postgresDown := "postgres://once_service:" + password + "@" + closed + "/once?sslmode=disable"
	secrets := []string{
		"ONCE_JWT_SECRET=startup-test-jwt-secret-0123456789abcdef",
		"ONCE_IDEMPOTENCY_SECRETS=t1:c3RhcnR1cC10ZXN0LWlkZW1wb3RlbmN5LXNlY3JldC0wMQ==",
		"ONCE_CREDENTIAL_KEYS=t1:c3RhcnR1cC10ZXN0LWNyZWRlbnRpYWxzLWtleS0zMmI=",
	}
	for _, c := range []struct {
		name string
		args []string
		env  []string
		want []string // every one of these in the line
	}{
		{"serve, address in use", []string{"serve"},
			[]string{"ONCE_HTTP_ADDR=" + taken.Addr().String()},
			[]string{taken.Addr().String(), "address already in use"}},
		{"serve, ops address in use", []string{"serve"},
			[]string{"ONCE_HTTP_ADDR=127.0.0.1:0", "ONCE_OPS_ADDR=" + taken.Addr().String()},
			[]string{taken.Addr().String(), "ONCE_OPS_ADDR", "address already in use"}},
		// PostgreSQL with the default queue: the in-process queue would
		// lose the jobs it holds in a crash. Refused before anything is
		// reached, naming the settings.
		{"serve, memory queue on PostgreSQL", []string{"serve"},
			append([]string{"DATABASE_URL=" + postgresDown}, secrets...),
			[]string{"ONCE_QUEUE=memory", "loses the jobs", "redis, amqp or bullmq", "ONCE_ACCEPT_JOB_LOSS=true"}},
		// The loss accepted explicitly: serve goes on, to the database.
		{"serve, database down", []string{"serve"},
			append([]string{"DATABASE_URL=" + postgresDown, "ONCE_ACCEPT_JOB_LOSS=true"}, secrets...),
			[]string{"database unreachable", closed, "connection refused"}},
		{"work, database down", []string{"work"},
			append([]string{"DATABASE_URL=" + postgresDown, "ONCE_QUEUE=redis", "ONCE_REDIS_URL=" + redis}, secrets...),
			[]string{"database unreachable", closed}},
		// BullMQ's worker (once's own jobs) starts like any other.
		{"work on bullmq, database down", []string{"work"},
			append([]string{"DATABASE_URL=" + postgresDown, "ONCE_QUEUE=bullmq", "ONCE_REDIS_URL=" + redis}, secrets...),
			[]string{"database unreachable", closed}},
		{"dispatch, redis down", []string{"dispatch"},
			append([]string{"DATABASE_URL=" + postgresDown, "ONCE_QUEUE=redis", "ONCE_REDIS_URL=redis://:" + password + "@" + closed + "/0"}, secrets...),
			[]string{"broker unreachable", closed, "redis", "connection refused"}},
		{"dispatch, a Redis Cluster node as a single node", []string{"dispatch"},
			append([]string{"DATABASE_URL=" + postgresDown, "ONCE_QUEUE=redis", "ONCE_REDIS_URL=" + clusterNode}, secrets...),
			[]string{"broker misconfigured", "redis", "Redis is a Cluster node", "redis+cluster://"}},
		{"work, rabbitmq refuses the password", []string{"work"},
			append([]string{"DATABASE_URL=" + postgresDown, "ONCE_QUEUE=amqp", "ONCE_AMQP_URL=amqp://guest:" + password + "@" + rabbit + "/"}, secrets...),
			[]string{"broker misconfigured", rabbit, "amqp", "refused the URL's credentials"}},
		{"work, rabbitmq down", []string{"work"},
			append([]string{"DATABASE_URL=" + postgresDown, "ONCE_QUEUE=amqp", "ONCE_AMQP_URL=amqp://guest:" + password + "@" + closed + "/"}, secrets...),
			[]string{"broker unreachable", closed, "amqp", "connection refused"}},
		{"workspace create, database down", []string{"workspace", "create", "--name", "acme", "--admin", "00000000-0000-4000-8000-000000000001"},
			append([]string{"DATABASE_URL=" + postgresDown}, secrets...),
			[]string{"database unreachable", closed}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if slices.Contains(c.env, "ONCE_REDIS_URL=") {
				t.Skip("no Redis answers (REDIS_URL): the broker check would fail first")
			}
			if slices.Contains(c.env, "ONCE_AMQP_URL=amqp://guest:"+password+"@/") {
				t.Skip("no RabbitMQ answers (AMQP_URL)")
			}
			cmd := exec.Command(bin, c.args...)
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "ONCE_LOG_LEVEL=error", "ONCE_OPS_ADDR=127.0.0.1:0"}, c.env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(2 * time.Minute): // only a failing run gets here
				_ = cmd.Process.Kill()
				t.Fatalf("still running: it did not fail at start-up; stderr: %s", stderr.String())
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Fatalf("want a non-zero exit, got %v; stderr: %s", err, stderr.String())
			}
			lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
			if len(lines) != 1 {
				t.Fatalf("want one line on stderr, got %d:\n%s", len(lines), stderr.String())
			}
			line := lines[0]
			if !strings.HasPrefix(line, "once: ") {
				t.Errorf("the line does not start with the command's name: %q", line)
			}
			for _, want := range c.want {
				if !strings.Contains(line, want) {
					t.Errorf("the line does not say %q: %q", want, line)
				}
			}
			for _, never := range []string{password, "could not build", "failed to build", "fx.", "dig", "reflect"} {
				if strings.Contains(line, never) {
					t.Errorf("the line contains %q: %q", never, line)
				}
			}
		})
	}
}

// closedAddr is a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// liveRedis is the URL of the test Redis (REDIS_URL, by default the local
// one) if it answers, so that the broker check passes and the database is
// what fails; "" if none does.
func liveRedis(t *testing.T) string {
	t.Helper()
	u := cmp.Or(os.Getenv("REDIS_URL"), "redis://127.0.0.1:6379/0")
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	conn, err := net.DialTimeout("tcp", parsed.Host, 3*time.Second)
	if err != nil {
		return ""
	}
	_ = conn.Close()
	return u
}

// liveRabbitMQ is host:port of the test RabbitMQ (AMQP_URL, by default the
// local one) if it answers; "" if none does.
func liveRabbitMQ(t *testing.T) string {
	t.Helper()
	parsed, err := url.Parse(cmp.Or(os.Getenv("AMQP_URL"), "amqp://guest:guest@127.0.0.1:5672/"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", parsed.Host, time.Second)
	if err != nil {
		return ""
	}
	_ = conn.Close()
	return parsed.Host
}
