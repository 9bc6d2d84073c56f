package app

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"go.uber.org/fx"

	"github.com/oncehq/once/domain/ai"
	"github.com/oncehq/once/domain/catalog"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/materials"
	"github.com/oncehq/once/domain/media"
	"github.com/oncehq/once/domain/publishing"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/ports"
)

// taskKinds are the code of each kind of the list (kinds.All), one line
// each: the kind as its use case declares it (jobs.Kind: its names and
// failure hook), the use case that starts its tasks and the worker handler
// that runs them. What needs only the kinds' facts ranges over kinds.All;
// what needs their code is derived from here: the use cases provided
// (TasksModule), the handler of each event type (newHandlers), the tasks
// jobs.Failures ends and reopens (newJobFailures). It is one list, not a
// registration from each kind's file: the modules read it while the
// package's variables are initialized, before such registrations would
// run. TestEveryTaskKindIsWired checks that each listed kind is here with
// its names, and has its retention rule, its handler, its failure hook and
// an HTTP route that starts it (checkKinds).
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

// kindServices provides the use case of every kind, as its own type and
// among the task services the HTTP routes find theirs in
// (httpapi.Deps.TaskServices).
func kindServices(kinds []taskKind) fx.Option {
	services := make([]any, 0, 2*len(kinds))
	for _, k := range kinds {
		services = append(services, k.service, fx.Annotate(asAny(k.service), fx.ResultTags(`group:"task_services"`)))
	}
	return fx.Provide(services...)
}

// asAny is a constructor taking what constructor returns and returning it
// as an any, so one instance of each use case also joins a group of
// values of different types.
func asAny(constructor any) any {
	built := reflect.TypeOf(constructor).Out(0)
	anyType := reflect.TypeFor[any]()
	return reflect.MakeFunc(reflect.FuncOf([]reflect.Type{built}, []reflect.Type{anyType}, false),
		func(in []reflect.Value) []reflect.Value { return []reflect.Value{in[0].Convert(anyType)} }).Interface()
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
	for _, k := range kinds.All {
		if handlers[k.EventType] == nil {
			return nil, fmt.Errorf("task kind %s has no worker handler", k.EventType)
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
func jobKinds(kinds []taskKind) []jobs.Kind {
	out := make([]jobs.Kind, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k.Kind)
	}
	return out
}

// checkKinds reports what each declared kind (in declared, kinds.All)
// lacks to be wired: a retention rule, its code in kinds (same names,
// once), its use case, its failure hook, its worker handler (in handlers)
// and an HTTP route that starts it (in starts, httpapi.TaskStarts); and
// code, a handler or a route for a kind that is not declared (its jobs
// would be written and never run, or its rows never expire).
func checkKinds(declared []kinds.Kind, code []taskKind, handlers Handlers, starts map[string][]string) error {
	var errs []error
	missing := func(event, what string) {
		errs = append(errs, fmt.Errorf("task kind %q has no %s", event, what))
	}
	events := map[string]bool{}
	for _, d := range declared {
		if d.EventType == "" || d.OperationKind == "" || d.ResourceType == "" || d.Table == "" {
			missing(d.EventType, "event type, operation kind, resource type or table")
		}
		if events[d.EventType] {
			errs = append(errs, fmt.Errorf("task kind %q is declared twice", d.EventType))
		}
		events[d.EventType] = true
		if d.Retention == kinds.Undeclared {
			missing(d.EventType, "retention rule (kinds.Kind.Retention)")
		}
		wired := slices.IndexFunc(code, func(k taskKind) bool { return k.EventType == d.EventType })
		if wired < 0 {
			missing(d.EventType, "code (a line in app taskKinds)")
		} else {
			errs = append(errs, checkKindCode(d, code[wired]))
		}
		if handlers[d.EventType] == nil {
			missing(d.EventType, "worker handler")
		}
		if len(starts[d.EventType]) == 0 {
			missing(d.EventType, "HTTP route that starts it (httpapi registerTask)")
		}
	}
	wired := map[string]bool{}
	for _, k := range code {
		if !events[k.EventType] || wired[k.EventType] {
			errs = append(errs, fmt.Errorf("code of task kind %q, which is not declared once in kinds.All", k.EventType))
		}
		wired[k.EventType] = true
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

// checkKindCode reports what the code of the declared kind d lacks: the
// names its use case declares must be d's, and it needs a use case and a
// failure hook.
func checkKindCode(d kinds.Kind, k taskKind) error {
	var errs []error
	if k.OperationKind != d.OperationKind || k.ResourceType != d.ResourceType {
		errs = append(errs, fmt.Errorf("task kind %q is %s/%s in its use case, %s/%s in kinds.All",
			d.EventType, k.OperationKind, k.ResourceType, d.OperationKind, d.ResourceType))
	}
	if k.Task == nil {
		errs = append(errs, fmt.Errorf("task kind %q has no failure hook (jobs.Kind.Task)", d.EventType))
	}
	if k.service == nil {
		errs = append(errs, fmt.Errorf("task kind %q has no use case", d.EventType))
	}
	return errors.Join(errs...)
}
