// Package pgbouncer runs a private PgBouncer for a test: Debian's
// pgbouncer (1.18 on bookworm) with an ini, an auth file and a port of its
// own in a temporary directory, never the system service. It pools in
// transaction mode unless told otherwise, as a team that outgrows one
// PostgreSQL puts it in front: each transaction gets whichever server
// connection is free.
//
// Without the pgbouncer program the tests skip, unless CI is set: there
// they fail (scripts/services.sh installs it).
package pgbouncer

import (
	"cmp"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver

	"github.com/oncehq/once/testsupport/pgcluster"
)

// Bouncer is a running PgBouncer.
type Bouncer struct {
	// Addr is host:port of the pooler.
	Addr   string
	dir    string
	cfg    Config
	listen int
	cmd    *exec.Cmd
	done   chan struct{}
}

// Config is what a Bouncer pools.
type Config struct {
	// Target is host:port of the PostgreSQL server; every database of it is
	// reachable under its own name.
	Target string
	// Users are the roles clients may connect as. Authentication is trust
	// (PgBouncer still wants them listed); PgBouncer connects to the server
	// as them, and the server trusts loopback.
	Users []string
	// PoolSize is the most server connections per database and user.
	PoolSize int
	// PoolMode is PgBouncer's pool_mode; empty: transaction.
	PoolMode string
}

// Start runs PgBouncer (in transaction mode unless cfg says otherwise) for
// cfg until t ends.
func Start(t testing.TB, cfg Config) *Bouncer {
	t.Helper()
	program, err := find()
	if err != nil {
		pgcluster.Missing(t, "pgbouncer", err)
	}
	// A directory the server's OS user owns: PgBouncer, like PostgreSQL,
	// refuses to run as root, and reads its files as that user.
	dir, err := os.MkdirTemp("", "once-pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := pgcluster.Own(dir); err != nil {
		t.Fatal(err)
	}
	listen, err := pgcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	b := &Bouncer{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(listen)), dir: dir, cfg: cfg, listen: listen, done: make(chan struct{})}
	var users strings.Builder
	for _, u := range cfg.Users {
		fmt.Fprintf(&users, "%q \"\"\n", u)
	}
	write(t, filepath.Join(dir, "userlist.txt"), users.String())
	b.writeIni(t)

	args := []string{b.iniPath()}
	if user := pgcluster.ServerUser(); user != "" {
		args = append([]string{"-u", user}, args...)
	}
	b.cmd = exec.Command(program, args...)
	out, err := os.Create(filepath.Join(dir, "stdout.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	b.cmd.Stdout, b.cmd.Stderr = out, out
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = b.cmd.Wait()
		close(b.done)
	}()
	t.Cleanup(func() {
		b.stop()
		if t.Failed() {
			t.Logf("pgbouncer log:\n%s", b.Log())
		}
	})
	b.waitListening(t)
	return b
}

// writeIni writes the ini of b's configuration.
func (b *Bouncer) writeIni(t testing.TB) {
	t.Helper()
	host, port, err := net.SplitHostPort(b.cfg.Target)
	if err != nil {
		t.Fatal(err)
	}
	write(t, b.iniPath(), fmt.Sprintf(`[databases]
* = host=%s port=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = %s
default_pool_size = %d
max_client_conn = 1000
logfile = %s
`, host, port, b.listen, filepath.Join(b.dir, "userlist.txt"), cmp.Or(b.cfg.PoolMode, "transaction"), max(b.cfg.PoolSize, 1), b.LogPath()))
}

// Retarget points PgBouncer at another server (host:port) while it runs,
// as an operator does after a failover: the ini is rewritten and reloaded
// (SIGHUP), clients stay connected, and PgBouncer closes its server
// connections to the old server as they come free. It returns once a new
// transaction through dsn (a client DSN of the pooler) reaches target.
func (b *Bouncer) Retarget(t testing.TB, target, dsn string) {
	t.Helper()
	b.cfg.Target = target
	b.writeIni(t)
	if err := b.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	_, port, err := net.SplitHostPort(target)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		var reached string
		// Unprepared: pgx's statement cache does not work through a
		// transaction pooler.
		err := db.QueryRow(`SELECT inet_server_port()::text`, pgx.QueryExecModeSimpleProtocol).Scan(&reached)
		if err == nil && reached == port {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgbouncer still reaches port %s (%v), not %s:\n%s", reached, err, target, b.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// DSN is dsn, a postgres:// URL, with its host and port the pooler's.
func (b *Bouncer) DSN(t testing.TB, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = b.Addr
	return u.String()
}

func (b *Bouncer) iniPath() string { return filepath.Join(b.dir, "pgbouncer.ini") }

// LogPath is PgBouncer's log file.
func (b *Bouncer) LogPath() string { return filepath.Join(b.dir, "pgbouncer.log") }

// Log is what PgBouncer logged and printed so far.
func (b *Bouncer) Log() string {
	logged, _ := os.ReadFile(b.LogPath())
	printed, _ := os.ReadFile(filepath.Join(b.dir, "stdout.log"))
	return string(printed) + string(logged)
}

// waitListening waits until the pooler accepts connections.
func (b *Bouncer) waitListening(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-b.done:
			t.Fatalf("pgbouncer exited at start:\n%s", b.Log())
		default:
		}
		if c, err := net.DialTimeout("tcp", b.Addr, time.Second); err == nil {
			_ = c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgbouncer does not listen on %s:\n%s", b.Addr, b.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop shuts PgBouncer down at once (SIGTERM), or kills it.
func (b *Bouncer) stop() {
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.done
	}
}

// find is the pgbouncer program: on the PATH, or where Debian puts it.
func find() (string, error) {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/pgbouncer"); err == nil {
		return "/usr/sbin/pgbouncer", nil
	}
	return "", fmt.Errorf("pgbouncer is not installed (apt-get install pgbouncer; scripts/services.sh does)")
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
