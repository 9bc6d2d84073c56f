package domain

import (
	"context"
	"sync/atomic"
)

// JobReport carries from a job's handler to the worker running it what the
// handler's error cannot: a handler returns nil both when its operation
// succeeded and when it recorded the operation failed (credentials refused,
// a file that is not an image: the job ran, the outcome is the user's), and
// the worker's metrics tell the two apart; and it returns nil both when
// its destination answered its call and when it made none (ReportNoCall),
// which the destination's pace and breaker must tell apart.
type JobReport struct {
	operationFailed atomic.Bool
	noCall          atomic.Bool
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

// ReportNoCall records, in the report ctx carries (the innermost, if
// any), that the job ends without an answer from its destination to learn
// from: it found nothing to do (a duplicate delivery, an operation
// cancelled or finished, an endpoint disabled or gone, a task that cannot
// run), or a user's cancel cut its call short. Counted as an answer, such
// a job holding a half-open breaker's probe would close the breaker of a
// destination that is still down.
func ReportNoCall(ctx context.Context) {
	if r, ok := ctx.Value(jobReportKey{}).(*JobReport); ok {
		r.noCall.Store(true)
	}
}

// NoCallReported reports whether the job whose report ctx carries (the
// innermost) said it made no call (ReportNoCall).
func NoCallReported(ctx context.Context) bool {
	r, ok := ctx.Value(jobReportKey{}).(*JobReport)
	return ok && r.noCall.Load()
}
