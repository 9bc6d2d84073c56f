package storm

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// This file lends the storm bench's private cluster, deployments and
// processes to the benches of other packages (bench/work), so that they
// start the once binary's processes the one way this package does.

// ClusterConfig is where a Cluster runs the once binary.
type ClusterConfig struct {
	Binary         string // the once executable
	PostgresBin    string // initdb and pg_ctl ("": the PATH or the newest installed)
	MaxConnections int
	RedisURL       string
	// Settings are more server settings of the cluster, "name=value" each
	// (e.g. shared_preload_libraries=pg_stat_statements).
	Settings []string
}

// Cluster is a private PostgreSQL cluster on which each run gets a fresh
// Service.
type Cluster struct{ r *runner }

// OpenCluster starts the private cluster. The returned Cluster must be
// closed (Close) even when err is not nil.
func OpenCluster(ctx context.Context, cfg ClusterConfig, progress io.Writer) (*Cluster, error) {
	r, _, err := openRunner(ctx, Config{Binary: cfg.Binary, PostgresBin: cfg.PostgresBin,
		MaxConnections: cfg.MaxConnections, RedisURL: cfg.RedisURL}, progress, cfg.Settings...)
	return &Cluster{r: r}, err
}

// Close removes the cluster (and its working directory unless err says the
// bench failed) and returns err with what failed on the way.
func (c *Cluster) Close(err error) error { return c.r.close(err) }

// Version is the cluster's PostgreSQL version.
func (c *Cluster) Version() string { return c.r.version }

// In runs fn on a fresh Service (database, workspace, token) labelled
// label and removes it afterwards; a failed run's logs are kept.
func (c *Cluster) In(ctx context.Context, label string, fn func(*Service) error) error {
	return c.r.in(ctx, label, func(d *deployment) error { return fn(&Service{d: d}) })
}

// Service is one run's deployment: its database, its first workspace and
// the processes of the once binary started on it.
type Service struct{ d *deployment }

// Super is a superuser connection to the run's database (one connection),
// which row-level security does not bind.
func (s *Service) Super() *sql.DB { return s.d.super }

// SuperuserURL is a superuser's URL of the run's database, for a peer
// that brings its own schema (bench/peers' River).
func (s *Service) SuperuserURL() string { return s.d.db.SuperuserDSN() }

// StartProgram starts bin (another program than once: a peer) with args
// as the process name, with the deployment's environment; it is stopped
// with the others and counted by ProcessesCPU under name.
func (s *Service) StartProgram(name, bin string, args ...string) (*Process, error) {
	p, err := startProcess(name, bin, s.d.env, filepath.Join(s.d.dir, name+".log"), args...)
	if err != nil {
		return nil, err
	}
	s.d.procs = append(s.d.procs, p)
	return &Process{p: p}, nil
}

// StartServe starts `once serve` with overrides (key, value pairs) and
// waits until it answers; the Service's API client then calls it over up
// to conns connections.
func (s *Service) StartServe(ctx context.Context, conns int, overrides ...string) error {
	return s.d.startServe(ctx, conns, overrides...)
}

// StartAnotherServe starts one more `once serve`, as the process name
// (several may run), with overrides, and returns a client of it acting as
// the first workspace's admin over up to conns connections, once it
// answers.
func (s *Service) StartAnotherServe(ctx context.Context, name string, conns int, overrides ...string) (*API, error) {
	c, err := s.d.startServeNamed(ctx, name, conns, overrides...)
	if err != nil {
		return nil, err
	}
	return &API{c: c}, nil
}

// Start starts `once <command>` with overrides (key, value pairs).
func (s *Service) Start(command string, overrides ...string) (*Process, error) {
	p, err := s.d.start(command, overrides...)
	return &Process{p: p}, err
}

// StartNamed starts `once <command>` as the process name (its log and
// instance id: several of one command may run, e.g. workers), with
// overrides (key, value pairs).
func (s *Service) StartNamed(name, command string, overrides ...string) (*Process, error) {
	p, err := s.d.startArgs(name, []string{command}, overrides...)
	return &Process{p: p}, err
}

// StartSim starts `once sim` with flags and returns its URL once it
// listens.
func (s *Service) StartSim(ctx context.Context, flags ...string) (string, error) {
	return startSim(ctx, s.d, flags...)
}

// API is the client of the Service's first workspace (after StartServe).
func (s *Service) API() *API { return &API{c: s.d.api} }

// NewWorkspace creates another workspace with an admin and returns a
// client of serve (after StartServe) acting as that admin over up to
// conns connections.
func (s *Service) NewWorkspace(ctx context.Context, name string, conns int) (*API, error) {
	admin := uuid.NewString()
	ws, err := runOnce(ctx, s.d.bin, s.d.env, "workspace", "create", "--name", name, "--admin", admin)
	if err != nil {
		return nil, err
	}
	token, err := runOnce(ctx, s.d.bin, s.d.env, "token", "--workspace", ws, "--user", admin)
	if err != nil {
		return nil, err
	}
	return &API{c: newClient(s.d.api.base, token, conns), Workspace: ws}, nil
}

// Workspace is the id of the Service's first workspace.
func (s *Service) Workspace() string { return s.d.workspace }

// API calls a Service's HTTP API as one workspace's admin.
type API struct {
	c         *client
	Workspace string // "" for the Service's first workspace (see Service.Workspace)
}

// Post sends a JSON request with an Idempotency-Key and returns the status
// (0: no answer) and the body.
func (a *API) Post(ctx context.Context, path, key string, body []byte) (int, []byte) {
	ans := a.c.post(ctx, path, key, body)
	return ans.status, ans.body
}

// Get sends a GET and returns the status (0: no answer) and the body.
func (a *API) Get(ctx context.Context, path string) (int, []byte) {
	ans := a.c.get(ctx, path)
	return ans.status, ans.body
}

// Process is one running process of the once binary.
type Process struct{ p *process }

// Pid is the process's id.
func (p *Process) Pid() int { return p.p.cmd.Process.Pid }

// Alive reports whether it still runs.
func (p *Process) Alive() bool { return p.p.alive() }

// LogTail is the end of its output, for error messages.
func (p *Process) LogTail() string { return p.p.logTail() }

// Stop sends SIGTERM and waits (killing it after a grace).
func (p *Process) Stop() { p.p.stop() }

// Kill sends SIGKILL (kill -9: no shutdown of any kind) and waits for it
// to end.
func (p *Process) Kill() { p.p.kill() }

// ProcessCPU is the CPU time (user and system) the process pid has spent.
func ProcessCPU(pid int) (time.Duration, error) { return processCPU(pid) }

// ProcessesCPU is the CPU time each running process of the Service has
// spent so far, by name (serve, dispatch, work, sim).
func (s *Service) ProcessesCPU() (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for _, p := range s.d.procs {
		if !p.alive() {
			continue
		}
		cpu, err := processCPU(p.cmd.Process.Pid)
		if err != nil {
			return nil, err
		}
		out[p.name] += cpu
	}
	return out, nil
}

// PostgresCPU is the CPU time the run's PostgreSQL server has spent so
// far: its postmaster (the parent of a backend of Super's) and every
// process it runs now, the backends of the pools included; backends that
// already exited are not counted.
func (s *Service) PostgresCPU(ctx context.Context) (time.Duration, error) {
	return s.d.postgresCPU(ctx)
}

// postgresCPU is Service.PostgresCPU of the deployment's server.
func (d *deployment) postgresCPU(ctx context.Context) (time.Duration, error) {
	var backend int
	if err := d.super.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		return 0, err
	}
	postmaster, err := processParent(backend)
	if err != nil {
		return 0, err
	}
	total, err := processCPU(postmaster)
	if err != nil {
		return 0, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if parent, err := processParent(pid); err == nil && parent == postmaster {
			if cpu, err := processCPU(pid); err == nil { // it may have just exited
				total += cpu
			}
		}
	}
	return total, nil
}

// processParent is the parent pid of pid.
func processParent(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	_, rest, _ := bytes.Cut(b, []byte(") "))
	fields := strings.Fields(string(rest))
	if len(fields) < 2 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return strconv.Atoi(fields[1]) // field 4, ppid
}
