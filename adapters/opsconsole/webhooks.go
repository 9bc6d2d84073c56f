package opsconsole

import (
	"net/http"
	"time"

	"github.com/google/uuid"
)

// webhookEndpoint is the deliveries not done to one endpoint. The URL is
// shown by its host only (its path or query may carry a token), and the
// endpoint's secret never.
type webhookEndpoint struct {
	Workspace         uuid.UUID  `json:"workspace_id"`
	Endpoint          uuid.UUID  `json:"endpoint_id"`
	Host              string     `json:"host"`
	Enabled           bool       `json:"enabled"`
	Deleted           bool       `json:"deleted"`
	Waiting           int        `json:"waiting"`
	DeadLetter        int        `json:"dead_letter"`
	OldestWaitingAgeS float64    `json:"oldest_waiting_age_seconds"`
	NextAttemptAt     *time.Time `json:"next_attempt_at,omitempty"`
	LastError         string     `json:"last_error"`
}

type webhooksView struct {
	Endpoints  []webhookEndpoint `json:"endpoints"`
	Waiting    int               `json:"waiting"`
	DeadLetter int               `json:"dead_letter"`
	snapshot
}

func (h *handler) webhooks(r *http.Request) (any, []any, error) {
	wh, err := h.console.Webhooks(r.Context())
	audit := []any{"action", "view_webhooks"}
	if err != nil {
		return nil, audit, err
	}
	v := webhooksView{Endpoints: make([]webhookEndpoint, len(wh.Endpoints)), Waiting: wh.Waiting, DeadLetter: wh.DeadLetter,
		snapshot: h.snapshot(wh.Truncated)}
	now := v.AsOf
	for i, e := range wh.Endpoints {
		v.Endpoints[i] = webhookEndpoint{Workspace: e.Workspace, Endpoint: e.Endpoint, Host: e.Host, Enabled: e.Enabled,
			Deleted: e.Deleted, Waiting: e.Waiting, DeadLetter: e.DeadLetter, LastError: e.LastError}
		if !e.OldestWaiting.IsZero() {
			v.Endpoints[i].OldestWaitingAgeS = max(now.Sub(e.OldestWaiting), 0).Seconds()
		}
		if !e.NextAttempt.IsZero() {
			at := e.NextAttempt
			v.Endpoints[i].NextAttemptAt = &at
		}
	}
	return v, append(audit, "endpoints", len(wh.Endpoints), "count", wh.Waiting+wh.DeadLetter), nil
}

func (h *handler) redriveWebhook(r *http.Request) (any, []any, error) {
	workspace, endpoint, err := pathIDs(r, "endpoint")
	audit := []any{"action", "redrive_webhook", "workspace", workspace, "endpoint", endpoint}
	if err != nil {
		return nil, audit, err
	}
	ids, n, err := h.console.RedriveWebhook(r.Context(), workspace, endpoint)
	return redrivenView{Redriven: n}, append(audit, "ids", ids, "count", n), err
}
