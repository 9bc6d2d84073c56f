package work

import (
	"context"
	"fmt"
	"strconv"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/bench/storm"
	"github.com/oncehq/once/testsupport/pgcluster"
)

// apiConns is how many connections the bench keeps open to serve.
const apiConns = 64

// stack is one run's processes: the simulator, serve (API only) and
// dispatch started at once, the workers when the run says.
type stack struct {
	svc    *storm.Service
	api    *storm.API
	sim    *simhttp.Admin
	simURL string
	// workers are the `once work` processes, metrics their /metrics, in
	// the order started.
	workers []*storm.Process
	metrics []string
	// workEnv is laid over the worker's environment only (key, value
	// pairs).
	workEnv []string
	// shared is laid over every process's environment (key, value pairs).
	shared []string
}

// startStack starts `once sim` with simFlags, serve and dispatch on Redis
// Streams, every process with shared laid over its environment; the
// worker waits for startWork.
func startStack(ctx context.Context, svc *storm.Service, shared []string, simFlags ...string) (*stack, error) {
	st := &stack{svc: svc, shared: shared}
	var err error
	if st.simURL, err = svc.StartSim(ctx, simFlags...); err != nil {
		return nil, err
	}
	st.sim = simhttp.NewAdmin(st.simURL)
	if err := svc.StartServe(ctx, apiConns, st.env("ONCE_DISPATCHER", "false", "ONCE_WORKER", "false")...); err != nil {
		return nil, err
	}
	st.api = svc.API()
	if _, err := svc.Start("dispatch", st.env()...); err != nil {
		return nil, err
	}
	return st, nil
}

// env is the settings every process of the stack shares, then overrides.
func (st *stack) env(overrides ...string) []string {
	env := append([]string{"ONCE_QUEUE", app.QueueRedis, "ONCE_SIM_URL", st.simURL}, st.shared...)
	return append(env, overrides...)
}

// startWork starts one more `once work` with slots jobs at once (0: its
// default), its metrics on a port of its own; the first is the process
// "work", the next "work2", "work3"… (their logs and instance ids).
func (st *stack) startWork(slots int) error {
	name := "work"
	if len(st.workers) > 0 {
		name = fmt.Sprintf("work%d", len(st.workers)+1)
	}
	w, metrics, err := st.launchWork(name, slots)
	if err != nil {
		return err
	}
	st.workers = append(st.workers, w)
	st.metrics = append(st.metrics, metrics)
	return nil
}

// restartWork starts worker i again under its name (its instance id:
// what a restarted pod keeps) after it ended.
func (st *stack) restartWork(i, slots int, name string) error {
	w, metrics, err := st.launchWork(name, slots)
	if err != nil {
		return err
	}
	st.workers[i], st.metrics[i] = w, metrics
	return nil
}

// launchWork starts `once work` as name and returns it and its /metrics.
func (st *stack) launchWork(name string, slots int) (*storm.Process, string, error) {
	port, err := pgcluster.FreePort()
	if err != nil {
		return nil, "", err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	env := st.env("ONCE_OPS_ADDR", addr)
	if slots > 0 {
		env = append(env, "ONCE_WORK_CONCURRENCY", strconv.Itoa(slots))
	}
	env = append(env, st.workEnv...)
	w, err := st.svc.StartNamed(name, "work", env...)
	return w, "http://" + addr + "/metrics", err
}

// deadWorker is the first worker that ended, nil while all run.
func (st *stack) deadWorker() *storm.Process {
	for _, w := range st.workers {
		if !w.Alive() {
			return w
		}
	}
	return nil
}
