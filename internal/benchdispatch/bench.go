package benchdispatch

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/oncehq/once/domain/dispatch"
)

// Run measures every publisher × instance count of cfg, one fresh database
// each, and prints a Markdown table and a line on the machine and the
// parameters to out. Progress and logs go to progress. After a failure the
// runs done so far are still printed.
func Run(ctx context.Context, cfg Config, out, progress io.Writer) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	version, err := serverVersion(ctx, cfg.SuperuserURL)
	if err != nil {
		return err
	}
	var results []Result
	var runErr error
runs:
	for _, kind := range cfg.Publishers {
		for _, k := range cfg.Instances {
			fmt.Fprintf(progress, "== %s publisher, %d dispatcher(s)\n", kind, k)
			res, err := runOne(ctx, cfg, kind, k, progress)
			if err != nil {
				runErr = fmt.Errorf("%s publisher, %d dispatcher(s): %w", kind, k, err)
				break runs
			}
			results = append(results, res)
		}
	}
	if len(results) > 0 {
		writeTable(out, results)
		fmt.Fprintln(out)
		fmt.Fprintln(out, describe(cfg, version))
	}
	return runErr
}

// describe is the line that says where and how the numbers were measured.
func describe(cfg Config, pgVersion string) string {
	inst := make([]string, len(cfg.Instances))
	for i, n := range cfg.Instances {
		inst[i] = fmt.Sprint(n)
	}
	return fmt.Sprintf("Machine: %d cores (runtime.NumCPU), %s, PostgreSQL %s. "+
		"Parameters: %d events over %d workspaces per run, %d producers committing %d events per transaction, "+
		"dispatcher batch %d, lease %s, publishers %s, dispatchers %s; each run on a fresh database, dispatchers woken by LISTEN/NOTIFY.",
		runtime.NumCPU(), runtime.Version(), pgVersion,
		cfg.Events, cfg.Workspaces, cfg.Producers, cfg.EventsPerTx,
		cfg.Batch, dispatch.DefaultLease, strings.Join(cfg.Publishers, ","), strings.Join(inst, ","))
}
