package jobs

import (
	"context"
	"log/slog"
	"sync"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// Transact runs fn in one transaction of workspace, like
// ports.UnitOfWork.Transact, and hands fn a logger whose lines are held
// back until the transaction committed: an outcome ("store verified") is
// logged only once the commit that records it happened, never before a
// commit that then fails or a crash in between. If the transaction rolls
// back, its lines are dropped (the error that rolled it back is the
// caller's to log). Likewise an operation fn ends failed
// (domain.ReportOperationFailed, which EndOperation and TaskRow.End call)
// reaches the worker's report only once the commit happened: fn reports to
// a report of the attempt's own, handed on after the commit.
func Transact(ctx context.Context, uow ports.UnitOfWork, workspace uuid.UUID, log *slog.Logger,
	fn func(ctx context.Context, tx ports.Tx, log *slog.Logger) error,
) error {
	held := &heldLines{}
	var attempt *domain.JobReport
	err := uow.Transact(ctx, workspace, func(ctx context.Context, tx ports.Tx) error {
		held.reset()
		ctx, attempt = domain.WithJobReport(ctx)
		return fn(ctx, tx, slog.New(&holdingHandler{next: log.Handler(), lines: held}))
	})
	if err == nil {
		held.emit(ctx)
		if attempt != nil && attempt.OperationFailed() {
			domain.ReportOperationFailed(ctx)
		}
	}
	return err
}

// heldLines are the records written in one transaction, each with the
// handler (attributes and groups included) it was written to.
type heldLines struct {
	mu    sync.Mutex
	lines []heldLine
}

type heldLine struct {
	handler slog.Handler
	record  slog.Record
}

func (h *heldLines) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = nil
}

func (h *heldLines) emit(ctx context.Context) {
	h.mu.Lock()
	lines := h.lines
	h.lines = nil
	h.mu.Unlock()
	for _, l := range lines {
		_ = l.handler.Handle(ctx, l.record)
	}
}

// holdingHandler holds records for heldLines instead of writing them.
type holdingHandler struct {
	next  slog.Handler
	lines *heldLines
}

func (h *holdingHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h *holdingHandler) Handle(_ context.Context, r slog.Record) error {
	h.lines.mu.Lock()
	defer h.lines.mu.Unlock()
	h.lines.lines = append(h.lines.lines, heldLine{handler: h.next, record: r.Clone()})
	return nil
}

func (h *holdingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &holdingHandler{next: h.next.WithAttrs(attrs), lines: h.lines}
}

func (h *holdingHandler) WithGroup(name string) slog.Handler {
	return &holdingHandler{next: h.next.WithGroup(name), lines: h.lines}
}
