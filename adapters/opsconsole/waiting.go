package opsconsole

import (
	"net/http"
	"time"
)

// waitingDestination is the jobs workers parked for one destination. The
// workers hold the breakers and paces themselves (each worker's ops
// listener: GET /destinations); the database holds only what they parked.
type waitingDestination struct {
	Destination string    `json:"destination"`
	Jobs        int       `json:"jobs"`
	Workspaces  int       `json:"workspaces"`
	EarliestDue time.Time `json:"earliest_due"`
	LatestDue   time.Time `json:"latest_due"`
	// Kind, WaitedFor and Reason say why one of them waits: the kind of
	// its wait (model.JobWaitKind), the destination it waits for (its own
	// or its platform; absent when none) and the reason for people.
	Kind      string `json:"kind"`
	WaitedFor string `json:"waited_for,omitempty"`
	Reason    string `json:"reason"`
}

type waitingView struct {
	Destinations []waitingDestination `json:"destinations"`
	Total        int                  `json:"total"`
	snapshot
}

func (h *handler) waiting(r *http.Request) (any, []any, error) {
	w, err := h.console.Waiting(r.Context())
	audit := []any{"action", "view_waiting"}
	if err != nil {
		return nil, audit, err
	}
	v := waitingView{Destinations: make([]waitingDestination, len(w.Destinations)), Total: w.Total, snapshot: h.snapshot(w.Truncated)}
	for i, d := range w.Destinations {
		v.Destinations[i] = waitingDestination{Destination: d.Destination, Jobs: d.Jobs, Workspaces: d.Workspaces,
			EarliestDue: d.EarliestDue, LatestDue: d.LatestDue, Kind: string(d.Kind), WaitedFor: d.WaitedFor, Reason: d.Reason}
	}
	return v, append(audit, "destinations", len(w.Destinations), "count", w.Total), nil
}
