// Package kinds is the one list of the kinds of background task and what
// each one is: its names, its table, its retention, its live-index
// conflict. It imports nothing of ours but domain/model, so the wiring,
// the adapters, the retention and the tests all range over the same list.
// Each kind's descriptor is declared in its own file here and listed on
// one line in All. What needs a kind's code registers from the kind's own
// files and is checked against the list: its use case, handler and
// failure hook (listed in app/kind_list.go), its repository and
// routes (in its adapter files).
package kinds

import "time"

// Kind describes one kind of background task.
type Kind struct {
	// EventType is the outbox event that asks a worker for a task (and
	// names its BullMQ queue unless configured otherwise).
	EventType string
	// OperationKind is the kind of the operations that track the tasks.
	OperationKind string
	// ResourceType names the task's row in operations and outbox events.
	ResourceType string
	// Table is the table that holds the kind's rows: its own task table,
	// or the longer-lived table whose rows it works on (stores, media).
	Table string
	// Retention says when the kind's rows go.
	Retention Retention
	// Conflict is the error a start meets when the table's live index
	// (at most one active task per key) is taken; nil without one.
	Conflict *Conflict
	// RetryFor is how long after its commit a job of the kind keeps
	// trying transient failures (its destination down, our database
	// failing over) before the worker gives up on it; zero: the worker's
	// default (ONCE_WORK_DEADLINE).
	RetryFor time.Duration

	// Reserved for what the work side adds to a kind, declared here when
	// it comes so that nothing else has to list kinds for it:
	//   - its destination (the external system its jobs call);
	//   - its ordering key (the field whose tasks run one at a time).
}

// Conflict is the error of a taken live index, as the API answers it.
type Conflict struct {
	// Code is the domain.Code (a string here: this package imports no
	// domain errors), Status its HTTP status, Help what a client does.
	Code   string
	Status int
	Help   string
}
