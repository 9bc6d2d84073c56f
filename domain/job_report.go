package domain

import (
	"context"
	"sync/atomic"
)

// JobReport carries from a job's handler to the worker running it what the
// handler's error cannot: a handler returns nil both when its operation
// succeeded and when it recorded the operation failed (credentials refused,
// a file that is not an image: the job ran, the outcome is the user's), and
// the worker's metrics tell the two apart.
type JobReport struct {
	operationFailed atomic.Bool
}

type jobReportKey struct{}

// WithJobReport returns ctx carrying a new report, for the handler of one
// delivery.
func WithJobReport(ctx context.Context) (context.Context, *JobReport) {
	r := &JobReport{}
	return context.WithValue(ctx, jobReportKey{}, r), r
}

// ReportOperationFailed records, in the report ctx carries (the innermost,
// if any), that the job ended its operation failed. jobs.Transact gives
// each transaction a report of its own and hands it on to the worker's
// only after the commit.
func ReportOperationFailed(ctx context.Context) {
	if r, ok := ctx.Value(jobReportKey{}).(*JobReport); ok {
		r.operationFailed.Store(true)
	}
}

// OperationFailed reports whether the job ended its operation failed.
func (r *JobReport) OperationFailed() bool { return r.operationFailed.Load() }
