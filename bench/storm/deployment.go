package storm

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/testsupport/pgcluster"
	"github.com/oncehq/once/testsupport/pgsandbox"
)

// readyTimeout bounds the wait for `once serve` to answer.
const readyTimeout = time.Minute

// deployment is the service of one scenario run: a fresh database on the
// private cluster, bootstrapped and migrated as "Running on PostgreSQL" in
// docs/configuration.md does it, a workspace with an admin and the admin's
// token, the `once` processes started on it, and a superuser connection that counts
// what happened (row-level security does not bind a superuser; the code
// under test never uses it).
type deployment struct {
	label    string
	bin      string
	dir      string
	db       *pgsandbox.Sandbox
	env      environment
	config   app.Config
	super    *sql.DB
	prefix   string
	redisURL string
	broker   bool // the deployment used the broker: clean its prefix
	api      *client
	procs    []*process
	// workspace is the id of the deployment's one workspace.
	workspace string
}

// newDeployment makes the database, the workspace and the token. The
// returned deployment must be closed even when err is not nil.
func newDeployment(ctx context.Context, r *runner, label string) (*deployment, error) {
	d := &deployment{label: label, bin: r.cfg.Binary, redisURL: r.cfg.RedisURL}
	var err error
	if d.dir, err = os.MkdirTemp(r.dir, label+"-"); err != nil {
		return d, err
	}
	d.db, err = pgsandbox.Create(ctx, r.cluster.SuperuserDSN(), "once_storm")
	if err != nil {
		return d, fmt.Errorf("database: %w", err)
	}
	// The sandbox's own pools would be sessions of the app role the bench
	// counts: only the processes under test may hold any.
	_ = d.db.App.Close()
	_ = d.db.Owner.Close()
	d.db.App, d.db.Owner = nil, nil
	d.super, err = sql.Open("pgx", d.db.SuperuserDSN())
	if err != nil {
		return d, err
	}
	d.super.SetMaxOpenConns(1)

	d.prefix = "once-storm-" + strings.TrimPrefix(d.db.Name, "once_storm_") + "."
	d.env = r.env.with(
		"DATABASE_URL", d.db.AppDSN,
		"ONCE_JWT_SECRET", randomBase64(48),
		"ONCE_IDEMPOTENCY_SECRETS", "k1:"+randomBase64(32),
		"ONCE_CREDENTIAL_KEYS", "k1:"+randomBase64(32),
		"ONCE_OBJECT_STORE", app.ObjectStoreLocal,
		"ONCE_OBJECT_STORE_DIR", filepath.Join(d.dir, "objects"),
		"ONCE_QUEUE_PREFIX", d.prefix,
		"ONCE_REDIS_URL", d.redisURL,
		// The benches that measure the API on the in-process queue are not
		// about crashes: no process of theirs is killed with jobs queued.
		"ONCE_ACCEPT_JOB_LOSS", "true",
	)
	// The bench drives one workspace as hard as the service goes: its
	// limits would measure themselves. A caller who sets them keeps them.
	for _, name := range []string{"ONCE_RATE_LIMIT", "ONCE_WORKSPACE_MAX_CONCURRENCY"} {
		if _, set := d.env[name]; !set {
			d.env = d.env.with(name, "off")
		}
	}
	if d.config, err = d.env.config(); err != nil {
		return d, err
	}

	admin := uuid.NewString()
	ws, err := runOnce(ctx, d.bin, d.env, "workspace", "create", "--name", "storm "+label, "--admin", admin)
	if err != nil {
		return d, err
	}
	token, err := runOnce(ctx, d.bin, d.env, "token", "--workspace", ws, "--user", admin)
	if err != nil {
		return d, err
	}
	d.workspace = ws
	d.api = &client{token: token} // the address comes with startServe
	return d, nil
}

// start starts `once <command>` with the deployment's environment and
// overrides (key, value pairs).
func (d *deployment) start(command string, overrides ...string) (*process, error) {
	return d.startArgs(command, []string{command}, overrides...)
}

// startArgs starts `once <args...>` as the process name (args[0] is the
// command), with the deployment's environment and overrides.
func (d *deployment) startArgs(name string, args []string, overrides ...string) (*process, error) {
	// Any free port for the ops listener: its defaults are fixed ports, and
	// a bench runs several of each command.
	env := d.env.with("ONCE_OPS_ADDR", "127.0.0.1:0").with(overrides...).with("ONCE_INSTANCE_ID", fmt.Sprintf("storm-%s-%s", d.label, name))
	if env["ONCE_QUEUE"] != app.QueueMemory && env["ONCE_QUEUE"] != "" {
		d.broker = true
	}
	p, err := startProcess(name, d.bin, env, filepath.Join(d.dir, name+".log"), args...)
	if err != nil {
		return nil, err
	}
	d.procs = append(d.procs, p)
	return p, nil
}

// startServe starts `once serve` on a free port and waits until it answers
// an authenticated request. conns is how many connections the bench's
// client keeps open to it.
func (d *deployment) startServe(ctx context.Context, conns int, overrides ...string) error {
	api, err := d.startServeNamed(ctx, "serve", conns, overrides...)
	if err != nil {
		return err
	}
	d.api = api
	return nil
}

// startServeNamed starts `once serve` as the process name (its log and
// instance id: several may run) and returns a client of it, once it
// answers, acting as the first workspace's admin.
func (d *deployment) startServeNamed(ctx context.Context, name string, conns int, overrides ...string) (*client, error) {
	port, err := pgcluster.FreePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p, err := d.startArgs(name, []string{"serve"}, append(overrides, "ONCE_HTTP_ADDR", addr)...)
	if err != nil {
		return nil, err
	}
	api := newClient("http://"+addr, d.api.token, conns)
	deadline := time.Now().Add(readyTimeout)
	for {
		if api.get(ctx, "/v1/operations").status == 200 {
			return api, nil
		}
		switch {
		case !p.alive():
			return nil, fmt.Errorf("once serve ended (%s):\n%s", p.state(), p.logTail())
		case time.Now().After(deadline):
			return nil, fmt.Errorf("once serve did not answer within %s:\n%s", readyTimeout, p.logTail())
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// count runs a count(*) query as the superuser.
func (d *deployment) count(ctx context.Context, query string, args ...any) (int, error) {
	var n int
	err := d.super.QueryRowContext(ctx, query, args...).Scan(&n)
	return n, err
}

// close stops the processes, drops the database and roles, deletes the
// broker keys under the deployment's prefix and the log directory (kept
// when keepLogs, for a run that failed).
func (d *deployment) close(ctx context.Context, keepLogs bool) error {
	for i := len(d.procs) - 1; i >= 0; i-- {
		d.procs[i].stop()
	}
	if d.api != nil && d.api.http != nil {
		d.api.close()
	}
	var errs []error
	if d.super != nil {
		_ = d.super.Close()
	}
	if d.db != nil {
		errs = append(errs, d.db.Drop(ctx))
	}
	if d.broker {
		errs = append(errs, deleteRedisPrefix(ctx, d.redisURL, d.prefix))
	}
	if !keepLogs && d.dir != "" {
		errs = append(errs, os.RemoveAll(d.dir))
	}
	return errors.Join(errs...)
}

func randomBase64(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}
