// Command once-bench measures the service on this machine and prints
// tables: the Dispatcher draining a backlog (drain), commit-to-publish
// latency at a steady rate (steady), storms and faults (storm) and the
// write path over HTTP beside pgbench (http), and the work side: one
// worker's jobs/s, fairness, outages and throttling (work). It is a binary of its own so
// that the once binary carries no benchmark code; storm and http run the
// once binary (built beside it by `make build`) as processes, drain and
// steady re-run this one as their Dispatcher and producer processes.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "once-bench",
		Short:         "Measure once on this machine (prints tables)",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(benchDrainCmd(), benchSteadyCmd(), benchFairnessCmd(), benchDispatcherChildCmd(), benchProducerChildCmd(), benchStormCmd(), benchHTTPCmd(), benchSoakCmd(), benchRetentionCmd(), benchWorkCmd())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "once-bench:", err)
		os.Exit(1)
	}
}
