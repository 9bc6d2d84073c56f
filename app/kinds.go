package app

import (
	"errors"
	"fmt"

	"go.uber.org/fx"

	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/ports"
)

// withKindsCode is wire applied to the code of the kinds (kindCode), or
// the error of what that code lacks (checkRegistered). What needs only
// the kinds' facts ranges over kinds.All; what needs their code is
// derived from here: the use cases provided (TasksModule), the handler of
// each event type (WorkerModule, newHandlers), the tasks jobs.Failures
// ends and reopens (newJobFailures). TestEveryTaskKindIsWired checks that
// each listed kind has its retention rule, its handler, its failure hook
// and an HTTP route that starts it (checkKinds).
func withKindsCode(wire func(code []kindModule) fx.Option) fx.Option {
	return wireKinds(kinds.All, kindCode, wire)
}

// wireKinds is wire applied to code, or fx.Error of what code lacks for
// the declared kinds.
func wireKinds(declared []kinds.Kind, code []kindModule, wire func(code []kindModule) fx.Option) fx.Option {
	if err := checkRegistered(declared, code); err != nil {
		return fx.Error(err)
	}
	return wire(code)
}

// jobHandler is a worker handler that knows the event type it runs.
type jobHandler interface {
	ports.MessageHandler
	Event() string
}

// kindServices provides the use case of every kind, as its own type and
// among the task services the HTTP routes find theirs in
// (httpapi.Deps.TaskServices): one instance, both ways.
func kindServices(code []kindModule) fx.Option {
	services := make([]any, 0, 2*len(code))
	for _, k := range code {
		services = append(services, k.Service, fx.Annotate(k.asTaskService, fx.ResultTags(`group:"task_services"`)))
	}
	return fx.Provide(services...)
}

// kindHandlers provides the handler of every kind, and the Handlers that
// map their event types to them.
func kindHandlers(code []kindModule) fx.Option {
	handlers := make([]any, 0, len(code)+1)
	for _, k := range code {
		handlers = append(handlers, fx.Annotate(k.Handler, fx.As(new(jobHandler)), fx.ResultTags(`group:"job_handlers"`)))
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

// newHandlers maps each kind's event type, and each of once's own, to its
// handler; every kind must have one.
func newHandlers(in handlersIn) (Handlers, error) {
	return handlersOf(in.Handlers, eventTypes)
}

// handlersOf maps the event type of each of hs to it. An event type of
// required without one would leave its jobs to be given up on, and a
// second handler of one event type would be dropped: either refuses to
// start.
func handlersOf(hs []jobHandler, required []string) (Handlers, error) {
	handlers := Handlers{}
	for _, h := range hs {
		if handlers[h.Event()] != nil {
			return nil, fmt.Errorf("two worker handlers for event type %s", h.Event())
		}
		handlers[h.Event()] = h
	}
	for _, eventType := range required {
		if handlers[eventType] == nil {
			return nil, fmt.Errorf("event type %s has no worker handler", eventType)
		}
	}
	return handlers, nil
}

// eventTypes are the event types of the kinds' jobs: their BullMQ queues
// are checked at start-up.
var eventTypes = func() []string {
	types := make([]string, 0, len(kinds.All))
	for _, k := range kinds.All {
		types = append(types, k.EventType)
	}
	return types
}()

// jobKinds are the kinds as jobs.Failures takes them.
func jobKinds(code []kindModule) []jobs.Kind {
	out := make([]jobs.Kind, 0, len(code))
	for _, k := range code {
		out = append(out, k.Kind)
	}
	return out
}

// checkRegistered reports what the application cannot be built without:
// each declared kind has its names and table, is declared once and has
// one line in kindCode with a use case, a worker handler and a failure
// hook; and no line is of a kind that is not declared (its jobs would be
// written and never expire, or its route start tasks no list knows).
func checkRegistered(declared []kinds.Kind, code []kindModule) error {
	var errs []error
	events := map[string]bool{}
	for _, d := range declared {
		if d.EventType == "" || d.OperationKind == "" || d.ResourceType == "" || d.Table == "" {
			errs = append(errs, missing(d.EventType, "event type, operation kind, resource type or table"))
		}
		if events[d.EventType] {
			errs = append(errs, fmt.Errorf("task kind %q is declared twice", d.EventType))
		}
		events[d.EventType] = true
	}
	registered := map[string]bool{}
	for _, k := range code {
		if !events[k.EventType] || registered[k.EventType] {
			errs = append(errs, fmt.Errorf("line of kindCode for task kind %q, which is not declared once in kinds.All", k.EventType))
		}
		registered[k.EventType] = true
		errs = append(errs, checkRegistration(k))
	}
	for _, d := range declared {
		if !registered[d.EventType] {
			errs = append(errs, missing(d.EventType, "line in kindCode (app/kind_list.go)"))
		}
	}
	return errors.Join(errs...)
}

// checkRegistration reports what the line k lacks: a use case, a
// worker handler and a failure hook.
func checkRegistration(k kindModule) error {
	var errs []error
	if k.Service == nil {
		errs = append(errs, missing(k.EventType, "use case"))
	}
	if k.Handler == nil {
		errs = append(errs, missing(k.EventType, "worker handler constructor"))
	}
	if k.Task == nil {
		errs = append(errs, missing(k.EventType, "failure hook (jobs.Kind.Task)"))
	}
	return errors.Join(errs...)
}

// missing is the error of a task kind that lacks what.
func missing(event, what string) error { return fmt.Errorf("task kind %q has no %s", event, what) }
