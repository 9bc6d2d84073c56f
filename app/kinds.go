package app

import (
	"errors"
	"fmt"
	"slices"

	"go.uber.org/fx"

	"github.com/oncehq/once/domain/ai"
	"github.com/oncehq/once/domain/catalog"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/materials"
	"github.com/oncehq/once/domain/media"
	"github.com/oncehq/once/domain/publishing"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/ports"
)

// taskKinds are the kinds of background task, one line each: the kind as
// its use case declares it (jobs.Kind: event type, operation kind, failure
// hook), the use case that starts its tasks and the worker handler that
// runs them. Everything that lists the kinds is derived from here: the use
// cases provided (TasksModule), the handler of each event type
// (newHandlers), the tasks jobs.Failures ends and reopens
// (newJobFailures), the queues checked on BullMQ (eventTypes).
// TestEveryTaskKindIsWired checks that each kind has its handler, its
// failure hook and an HTTP route that starts it (checkKinds).
var taskKinds = []taskKind{
	{stores.VerifyKind, stores.NewService, stores.NewVerifyHandler},
	{media.Kind, media.NewService, media.NewProcessHandler},
	{materials.Kind, materials.NewService, materials.NewTransferHandler},
	{publishing.Kind, publishing.NewService, publishing.NewPublishHandler},
	{catalog.Kind, catalog.NewService, catalog.NewSyncHandler},
	{ai.Kind, ai.NewService, ai.NewTaskHandler},
}

// taskKind is one kind of background task as the application wires it.
type taskKind struct {
	jobs.Kind
	// service constructs the use case that starts the kind's tasks.
	service any
	// handler constructs the worker handler of the kind's event type: a
	// jobHandler (every jobs.Handler is one).
	handler any
}

// jobHandler is a worker handler that knows the event type it runs.
type jobHandler interface {
	ports.MessageHandler
	Event() string
}

// kindServices provides the use case of every kind.
func kindServices(kinds []taskKind) fx.Option {
	services := make([]any, 0, len(kinds))
	for _, k := range kinds {
		services = append(services, k.service)
	}
	return fx.Provide(services...)
}

// kindHandlers provides the handler of every kind, and the Handlers that
// map their event types to them.
func kindHandlers(kinds []taskKind) fx.Option {
	handlers := make([]any, 0, len(kinds)+1)
	for _, k := range kinds {
		handlers = append(handlers, fx.Annotate(k.handler, fx.As(new(jobHandler)), fx.ResultTags(`group:"job_handlers"`)))
	}
	return fx.Provide(append(handlers, newHandlers)...)
}

// Handlers maps each event type to its worker handler.
type Handlers map[string]ports.MessageHandler

// handlersIn are the worker handlers of the kinds.
type handlersIn struct {
	fx.In
	Handlers []jobHandler `group:"job_handlers"`
}

// newHandlers maps each kind's event type to its handler. A kind without
// one would leave its jobs to be given up on, and a second handler of one
// event type would be dropped: either refuses to start.
func newHandlers(in handlersIn) (Handlers, error) {
	handlers := Handlers{}
	for _, h := range in.Handlers {
		if handlers[h.Event()] != nil {
			return nil, fmt.Errorf("two worker handlers for event type %s", h.Event())
		}
		handlers[h.Event()] = h
	}
	for _, k := range taskKinds {
		if handlers[k.EventType] == nil {
			return nil, fmt.Errorf("task kind %s has no worker handler", k.EventType)
		}
	}
	return handlers, nil
}

// eventTypes are the event types of the kinds' jobs: their BullMQ queues
// are checked at start-up.
var eventTypes = func() []string {
	types := make([]string, 0, len(taskKinds))
	for _, k := range taskKinds {
		types = append(types, k.EventType)
	}
	return types
}()

// EventTypes are the event types of every task kind, in the order of
// taskKinds (for tools and tests that must name every queue).
func EventTypes() []string { return slices.Clone(eventTypes) }

// jobKinds are the kinds as jobs.Failures takes them.
func jobKinds(kinds []taskKind) []jobs.Kind {
	out := make([]jobs.Kind, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k.Kind)
	}
	return out
}

// checkKinds reports what each kind lacks to be wired: its names, its
// use case, its failure hook, its worker handler (in handlers) and an HTTP
// route that starts it (in starts, httpapi.TaskStarts); a kind declared
// twice; and a handler or a route for a kind that is not declared (left
// out of taskKinds, its jobs would be written and never run).
func checkKinds(kinds []taskKind, handlers Handlers, starts map[string][]string) error {
	var errs []error
	missing := func(k taskKind, what string) {
		errs = append(errs, fmt.Errorf("task kind %q has no %s", k.EventType, what))
	}
	events, operations := map[string]bool{}, map[string]bool{}
	for _, k := range kinds {
		if k.EventType == "" || k.OperationKind == "" || k.ResourceType == "" {
			missing(k, "event type, operation kind or resource type")
		}
		if events[k.EventType] || operations[k.OperationKind] {
			errs = append(errs, fmt.Errorf("task kind %q is declared twice", k.EventType))
		}
		events[k.EventType], operations[k.OperationKind] = true, true
		if k.Task == nil {
			missing(k, "failure hook (jobs.Kind.Task)")
		}
		if k.service == nil {
			missing(k, "use case")
		}
		if handlers[k.EventType] == nil {
			missing(k, "worker handler")
		}
		if len(starts[k.EventType]) == 0 {
			missing(k, "HTTP route that starts it (httpapi registerTask)")
		}
	}
	for event := range handlers {
		if !events[event] {
			errs = append(errs, fmt.Errorf("worker handler for %q, which is no declared task kind", event))
		}
	}
	for event, routes := range starts {
		if !events[event] {
			errs = append(errs, fmt.Errorf("HTTP route %v starts %q, which is no declared task kind", routes, event))
		}
	}
	return errors.Join(errs...)
}
