// Package patroni runs a private high-availability PostgreSQL for the
// failover tests: etcd, three PostgreSQL nodes managed by Patroni
// (synchronous_mode and synchronous_mode_strict, so a commit is
// acknowledged only once a standby has it and Patroni elects only a
// standby that has every acknowledged commit) and HAProxy checking
// Patroni's REST API, the two ways in a deployment uses: libpq's multi-host
// URL with target_session_attrs=read-write, and HAProxy's /primary check.
// Everything listens on free loopback ports and lives in a directory of
// its own; the PostgreSQL nodes run as the postgres OS user when the
// caller is root (pgcluster.ServerUser). The faults are the three paths
// to a new leader: the leader's postmaster or its whole node killed -9, a
// switchover, the leader cut off from etcd.
package patroni

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/oncehq/once/testsupport/faultproxy"
	"github.com/oncehq/once/testsupport/pgcluster"
)

// Nodes is how many PostgreSQL nodes a cluster has: one leader and two
// synchronous candidates, so that a cluster with one node down still has
// a synchronous standby and takes writes under synchronous_mode_strict.
const Nodes = 3

// Cluster is etcd, Nodes PostgreSQL nodes under Patroni and HAProxy.
type Cluster struct {
	t     testing.TB
	dir   string
	bin   string
	runAs string
	scope string
	etcd  *process
	// etcdAddr is etcd's client address.
	etcdAddr string
	nodes    []*Node
	haproxy  *process
	haAddr   string
}

// Node is one PostgreSQL node and its Patroni.
type Node struct {
	Name string
	// PGPort and APIPort are the node's PostgreSQL and Patroni REST ports.
	PGPort, APIPort int
	dir             string
	config          string
	// etcd is this node's own way to etcd, cut to take its lease away.
	etcd    *faultproxy.Proxy
	patroni *process
}

// process is a program the cluster started, with its output kept.
type process struct {
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
}

// StartForTest starts a cluster for t and stops it when t ends. It skips
// t when Patroni, etcd, HAProxy or PostgreSQL are not installed (fails it
// when CI is set: scripts/services.sh installs them), and with -short.
func StartForTest(t testing.TB) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts etcd, three PostgreSQL nodes under Patroni and HAProxy")
	}
	bin, err := pgcluster.FindBin()
	if err != nil {
		pgcluster.Missing(t, "patroni", err)
	}
	for _, prog := range []string{"patroni", "patronictl", "etcd", "haproxy"} {
		if _, err := exec.LookPath(prog); err != nil {
			pgcluster.Missing(t, "patroni", fmt.Errorf("%s is not installed (scripts/services.sh installs it): %w", prog, err))
		}
	}
	dir, err := os.MkdirTemp("", "once-patroni-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{t: t, dir: dir, bin: bin, runAs: pgcluster.ServerUser(), scope: filepath.Base(dir)}
	t.Cleanup(c.stop)
	if err := pgcluster.Own(dir); err != nil {
		t.Fatal(err)
	}
	c.startEtcd()
	for i := range Nodes {
		c.addNode(fmt.Sprintf("pg%d", i+1))
	}
	// The first node bootstraps alone, so that it is the leader and the
	// others clone it rather than race to initdb.
	c.startPatroni(c.nodes[0])
	c.waitFor(2*time.Minute, "pg1 leads", func() bool { l, err := c.Leader(); return err == nil && l == "pg1" })
	for _, n := range c.nodes[1:] {
		c.startPatroni(n)
	}
	c.WaitHealthy()
	c.startHAProxy()
	return c
}

// stop kills everything the cluster started and removes its directory,
// keeping the logs in t's output if t failed.
func (c *Cluster) stop() {
	for _, n := range c.nodes {
		c.killNode(n)
		if n.etcd != nil {
			n.etcd.Down()
		}
	}
	for _, p := range []*process{c.haproxy, c.etcd} {
		if p != nil {
			p.kill()
		}
	}
	if c.t.Failed() {
		for _, n := range c.nodes {
			if n.patroni != nil {
				c.t.Logf("Patroni log of %s:\n%s", n.Name, tail(n.patroni.log(), 6000))
			}
			if b, err := os.ReadFile(filepath.Join(n.dir, "data", "log", "postgresql.log")); err == nil {
				c.t.Logf("PostgreSQL log of %s:\n%s", n.Name, tail(string(b), 4000))
			}
		}
	}
	_ = os.RemoveAll(c.dir)
}

// startEtcd starts a one-member etcd on free ports, its data under the
// cluster's directory.
func (c *Cluster) startEtcd() {
	client, peer := c.freePort(), c.freePort()
	c.etcdAddr = "127.0.0.1:" + strconv.Itoa(client)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peer)
	c.etcd = c.start("", "etcd",
		"--name", "etcd1", "--data-dir", filepath.Join(c.dir, "etcd"),
		"--listen-client-urls", "http://"+c.etcdAddr, "--advertise-client-urls", "http://"+c.etcdAddr,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "etcd1="+peerURL, "--initial-cluster-state", "new",
		"--listen-metrics-urls", "http://127.0.0.1:"+strconv.Itoa(c.freePort()))
	c.waitFor(time.Minute, "etcd answers", func() bool {
		resp, err := http.Get("http://" + c.etcdAddr + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// addNode writes a node's Patroni configuration. Each node reaches etcd
// through a proxy of its own (use_proxies: Patroni does not look for
// other etcd members behind it), so that one node can be cut off.
func (c *Cluster) addNode(name string) {
	n := &Node{Name: name, PGPort: c.freePort(), APIPort: c.freePort(), dir: filepath.Join(c.dir, name)}
	if err := os.Mkdir(n.dir, 0o700); err != nil {
		c.t.Fatal(err)
	}
	if err := pgcluster.Own(n.dir); err != nil {
		c.t.Fatal(err)
	}
	proxy, err := faultproxy.Listen(c.etcdAddr)
	if err != nil {
		c.t.Fatal(err)
	}
	n.etcd = proxy
	n.config = filepath.Join(n.dir, "patroni.yml")
	conf := fmt.Sprintf(`scope: %[1]s
namespace: /once/
name: %[2]s
log:
  level: INFO
restapi:
  listen: 127.0.0.1:%[3]d
  connect_address: 127.0.0.1:%[3]d
etcd3:
  hosts: %[4]s
  use_proxies: true
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 2
    retry_timeout: 4
    synchronous_mode: true
    synchronous_mode_strict: true
    synchronous_node_count: 1
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_log_hints: "on"
        max_connections: 200
        max_wal_senders: 10
        max_replication_slots: 10
        wal_retrieve_retry_interval: 1s
  initdb:
    - encoding: UTF8
    - auth: trust
    - no-sync
  pg_hba:
    - local all all trust
    - local replication all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:%[5]d
  connect_address: 127.0.0.1:%[5]d
  data_dir: %[6]s/data
  bin_dir: %[7]s
  pgpass: %[6]s/pgpass
  authentication:
    superuser:
      username: postgres
    replication:
      username: postgres
    rewind:
      username: postgres
  parameters:
    unix_socket_directories: %[6]s
    wal_retrieve_retry_interval: 1s
    logging_collector: "on"
    log_directory: log
    log_filename: postgresql.log
    fsync: "off"
tags:
  nofailover: false
  noloadbalance: false
`, c.scope, name, n.APIPort, proxy.Addr(), n.PGPort, n.dir, c.bin)
	if err := os.WriteFile(n.config, []byte(conf), 0o600); err != nil {
		c.t.Fatal(err)
	}
	if err := pgcluster.Own(n.config); err != nil {
		c.t.Fatal(err)
	}
	c.nodes = append(c.nodes, n)
}

// startPatroni starts a node's Patroni, which starts (or first makes) its
// PostgreSQL.
func (c *Cluster) startPatroni(n *Node) {
	n.patroni = c.start(c.runAs, "patroni", n.config)
}

// StartNode starts a node again after KillNode: its Patroni rejoins,
// rewinding its PostgreSQL if needed, as a standby.
func (c *Cluster) StartNode(name string) {
	c.startPatroni(c.node(name))
}

// start starts program (as runAs) in its own process group, its output
// in a file under the cluster's directory (never a pipe: the PostgreSQL
// Patroni starts would inherit it and outlive Patroni).
func (c *Cluster) start(runAs, program string, args ...string) *process {
	cmd := pgcluster.Command(context.Background(), runAs, program, args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "HOME="+c.dir, "PYTHONUNBUFFERED=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logPath := filepath.Join(c.dir, fmt.Sprintf("%s-%d.log", filepath.Base(program), time.Now().UnixNano()))
	out, err := os.Create(logPath)
	if err != nil {
		c.t.Fatal(err)
	}
	defer out.Close()
	p := &process{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("patroni: start %s: %v", program, err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p
}

// log is what p wrote so far.
func (p *process) log() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

// kill kills p's process group with SIGKILL and waits for p.
func (p *process) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// startHAProxy starts HAProxy in TCP mode in front of the nodes, sending
// connections to the one whose Patroni answers 200 on /primary, and
// cutting the sessions of a node marked down (the old leader's clients
// must not keep writing to it).
func (c *Cluster) startHAProxy() {
	c.haAddr = "127.0.0.1:" + strconv.Itoa(c.freePort())
	var servers strings.Builder
	for _, n := range c.nodes {
		fmt.Fprintf(&servers, "    server %s 127.0.0.1:%d check port %d\n", n.Name, n.PGPort, n.APIPort)
	}
	conf := fmt.Sprintf(`global
    maxconn 1000
defaults
    mode tcp
    timeout connect 5s
    timeout client 30m
    timeout server 30m
    timeout check 2s
listen primary
    bind %s
    option httpchk GET /primary
    http-check expect status 200
    default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
%s`, c.haAddr, servers.String())
	path := filepath.Join(c.dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		c.t.Fatal(err)
	}
	if out, err := exec.Command("haproxy", "-c", "-f", path).CombinedOutput(); err != nil {
		c.t.Fatalf("haproxy -c: %v: %s", err, out)
	}
	c.haproxy = c.start("", "haproxy", "-db", "-f", path)
	c.waitFor(time.Minute, "HAProxy reaches the leader", func() bool {
		return c.writable(c.HAProxyDSN("postgres"))
	})
}

// MultiHostDSN is the libpq URL listing every node, connecting to the one
// that takes writes, for database db as the superuser.
func (c *Cluster) MultiHostDSN(db string) string {
	hosts := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		hosts[i] = "127.0.0.1:" + strconv.Itoa(n.PGPort)
	}
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable&target_session_attrs=read-write&connect_timeout=3",
		strings.Join(hosts, ","), db)
}

// HAProxyDSN connects to database db as the superuser through HAProxy.
func (c *Cluster) HAProxyDSN(db string) string {
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable&connect_timeout=3", c.haAddr, db)
}

// HAProxyAddr is HAProxy's host:port.
func (c *Cluster) HAProxyAddr() string { return c.haAddr }

// member is one node in Patroni's /cluster answer.
type member struct {
	Name  string `json:"name"`
	Role  string `json:"role"`
	State string `json:"state"`
	Lag   any    `json:"lag"`
}

// Members is Patroni's view of the cluster (GET /cluster on the first
// node whose REST API answers).
func (c *Cluster) Members() ([]member, error) {
	var last error
	for _, n := range c.nodes {
		var out struct {
			Members []member `json:"members"`
		}
		if last = getJSON(fmt.Sprintf("http://127.0.0.1:%d/cluster", n.APIPort), &out); last == nil {
			return out.Members, nil
		}
	}
	return nil, last
}

// Leader is the name of the node Patroni has as leader, running.
func (c *Cluster) Leader() (string, error) {
	ms, err := c.Members()
	if err != nil {
		return "", err
	}
	for _, m := range ms {
		if m.Role == "leader" && m.State == "running" {
			return m.Name, nil
		}
	}
	return "", errors.New("patroni: no running leader")
}

// WaitHealthy waits until there is a running leader that takes writes,
// and every node Patroni knows streams from it, one of them as the
// synchronous standby.
func (c *Cluster) WaitHealthy() {
	c.t.Helper()
	c.waitFor(3*time.Minute, "a leader and every node streaming", func() bool {
		ms, err := c.Members()
		if err != nil || len(ms) != len(c.running()) {
			return false
		}
		leader, sync := 0, 0
		for _, m := range ms {
			switch {
			case m.Role == "leader" && m.State == "running":
				leader++
			case m.Role == "sync_standby" && (m.State == "streaming" || m.State == "running"):
				sync++
			case m.State != "streaming" && m.State != "running":
				return false
			}
		}
		return leader == 1 && sync >= 1 && c.writable(c.MultiHostDSN("postgres"))
	})
}

// running is the nodes whose Patroni runs.
func (c *Cluster) running() []*Node {
	var out []*Node
	for _, n := range c.nodes {
		if n.patroni != nil && !n.patroni.exited() {
			out = append(out, n)
		}
	}
	return out
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// writable reports whether dsn reaches a server that takes writes.
func (c *Cluster) writable(dsn string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return false
	}
	defer conn.Close(ctx)
	var rec bool
	return conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&rec) == nil && !rec
}

// Switchover asks Patroni for a planned switchover away from the leader
// (patronictl switchover, to any healthy candidate), and returns the old
// leader's name once another node leads.
func (c *Cluster) Switchover() string {
	c.t.Helper()
	old := c.mustLeader()
	out, err := exec.Command("patronictl", "-c", c.node(old).config, "switchover", "--leader", old, "--force").CombinedOutput()
	if err != nil {
		c.t.Fatalf("patronictl switchover: %v: %s", err, out)
	}
	c.waitNewLeader(old)
	return old
}

// KillLeaderPostmaster kills the leader's postmaster with SIGKILL (its
// backends end on their own). Patroni sees its PostgreSQL gone and, still
// holding the leader key, starts it again in place: a crash restart, not a
// failover. It returns the leader's name.
func (c *Cluster) KillLeaderPostmaster() string {
	c.t.Helper()
	name := c.mustLeader()
	n := c.node(name)
	pid, err := postmasterPID(n)
	if err != nil {
		c.t.Fatalf("patroni: leader's postmaster.pid: %v", err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		c.t.Fatalf("patroni: kill postmaster %d: %v", pid, err)
	}
	return name
}

// KillLeader kills the leader's whole node with SIGKILL, Patroni and
// PostgreSQL: its leader key expires (ttl) and Patroni elects the
// synchronous standby. It returns the old leader's name once another
// node leads; StartNode brings it back.
func (c *Cluster) KillLeader() string {
	c.t.Helper()
	name := c.mustLeader()
	c.killNode(c.node(name))
	c.waitNewLeader(name)
	return name
}

// killNode kills a node's Patroni and its PostgreSQL. Patroni starts the
// postmaster in a session of its own, so the postmaster's process group
// (it and its backends) is killed apart from Patroni's.
func (c *Cluster) killNode(n *Node) {
	if n.patroni == nil {
		return
	}
	pid, pidErr := postmasterPID(n)
	n.patroni.kill()
	if pidErr == nil {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = syscall.Kill(pid, syscall.SIGKILL)
		for deadline := time.Now().Add(30 * time.Second); processAlive(pid) && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// postmasterPID is the pid in a node's postmaster.pid.
func postmasterPID(n *Node) (int, error) {
	raw, err := os.ReadFile(filepath.Join(n.dir, "data", "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0]))
}

// processAlive reports whether pid runs (a zombie or a reaped process has
// ended).
func processAlive(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(raw), ')')
	fields := strings.Fields(string(raw)[i+1:])
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// CutLeaderFromEtcd takes away the leader's way to etcd (its proxy
// refuses and cuts connections) while its Patroni and PostgreSQL keep
// running: Patroni cannot renew the leader key, demotes its PostgreSQL
// to read-only after retry_timeout, and the others elect a new leader
// when the key expires. It returns the old leader's name once another
// node leads, with the old one still cut off; Reconnect ends the cut.
func (c *Cluster) CutLeaderFromEtcd() string {
	c.t.Helper()
	name := c.mustLeader()
	c.node(name).etcd.Down()
	c.waitNewLeader(name)
	return name
}

// Reconnect gives a node cut off by CutLeaderFromEtcd its way to etcd
// back: it rejoins as a standby of the new leader.
func (c *Cluster) Reconnect(name string) {
	c.t.Helper()
	if err := c.node(name).etcd.Restore(); err != nil {
		c.t.Fatal(err)
	}
}

// InRecovery reports pg_is_in_recovery() of a node, directly (not
// through either way in); an error when it does not answer.
func (c *Cluster) InRecovery(name string) (bool, error) {
	n := c.node(name)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", n.PGPort))
	if err != nil {
		return false, err
	}
	defer conn.Close(ctx)
	var rec bool
	err = conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&rec)
	return rec, err
}

// waitNewLeader waits until a node other than old leads and takes writes
// through the multi-host URL.
func (c *Cluster) waitNewLeader(old string) {
	c.t.Helper()
	c.waitFor(2*time.Minute, "a leader other than "+old, func() bool {
		l, err := c.Leader()
		return err == nil && l != old
	})
}

func (c *Cluster) mustLeader() string {
	c.t.Helper()
	var name string
	c.waitFor(2*time.Minute, "a leader", func() bool {
		var err error
		name, err = c.Leader()
		return err == nil
	})
	return name
}

func (c *Cluster) node(name string) *Node {
	for _, n := range c.nodes {
		if n.Name == name {
			return n
		}
	}
	c.t.Fatalf("patroni: no node %q", name)
	return nil
}

// waitFor polls cond until it holds, failing t with what it waited for
// after limit (a bound on a broken setup, not a measurement).
func (c *Cluster) waitFor(limit time.Duration, what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			ms, err := c.Members()
			c.t.Fatalf("patroni: waited %s for %s; cluster: %+v %v", limit, what, ms, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *Cluster) freePort() int {
	p, err := pgcluster.FreePort()
	if err != nil {
		c.t.Fatal(err)
	}
	return p
}

func getJSON(url string, into any) error {
	client := http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
