package app

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/media"
	"github.com/oncehq/once/domain/stores"
)

// wiring builds what checkKinds checks, as the application builds it: the
// worker handlers from the list of kinds (on the embedded store, with the
// in-process simulators), and the routes of the API.
func wiring(t *testing.T) (Handlers, map[string][]string) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.applyDevDefaults()
	cfg.ObjectStore = ObjectStoreMemory
	var handlers Handlers
	fxtest.New(t, Base(cfg, slog.New(slog.DiscardHandler)), inProcessSystems, withKindsCode(kindHandlers), fx.Populate(&handlers))
	return handlers, httpapi.TaskStarts(httpapi.NewAPI(http.NewServeMux(), httpapi.Deps{}))
}

// Every declared task kind has its names, its retention rule, its
// registration (use case, handler and failure hook), its worker handler
// and an HTTP route that starts it.
func TestEveryTaskKindIsWired(t *testing.T) {
	handlers, starts := wiring(t)
	require.NoError(t, checkKinds(kinds.All, kindCode, handlers, starts))
	assert.Len(t, handlers, len(kinds.All))
	assert.ElementsMatch(t, eventTypes, slices.Collect(maps.Keys(handlers)), "BullMQ checks the queues of every kind")
}

// checkKinds can fail: a kind that lacks a piece is named with what it
// lacks. The sample is any declared kind (the last).
func TestAKindNotFullyWiredIsReported(t *testing.T) {
	handlers, starts := wiring(t)
	sample := kinds.All[len(kinds.All)-1]
	event := sample.EventType
	without := func(m map[string][]string, key string) map[string][]string {
		m = maps.Clone(m)
		delete(m, key)
		return m
	}
	declaredWith := func(change func(k *kinds.Kind)) []kinds.Kind {
		declared := slices.Clone(kinds.All)
		change(&declared[len(declared)-1])
		return declared
	}
	code := kindCode
	codeWith := func(change func(k *kindModule)) []kindModule {
		changed := slices.Clone(code)
		for i := range changed {
			if changed[i].EventType == event {
				change(&changed[i])
			}
		}
		return changed
	}
	notSample := func(k kindModule) bool { return k.EventType == event }
	noHandler := maps.Clone(handlers)
	delete(noHandler, event)
	thing := kinds.Kind{EventType: "thing.do", OperationKind: "thing.do", ResourceType: "thing", Table: "things", Retention: kinds.ExpiresFinished}

	cases := map[string]struct {
		declared []kinds.Kind
		code     []kindModule
		handlers Handlers
		starts   map[string][]string
		want     []string
	}{
		"a kind declared and nothing else": {
			declared: append(slices.Clone(kinds.All), thing), code: code, handlers: handlers, starts: starts,
			want: []string{`"thing.do" has no line in kindCode`, `"thing.do" has no worker handler`, `"thing.do" has no HTTP route`},
		},
		"no retention rule": {
			declared: declaredWith(func(k *kinds.Kind) { k.Retention = kinds.Undeclared }), code: code, handlers: handlers, starts: starts,
			want: []string{`"` + event + `" has no retention rule`},
		},
		"no worker handler": {
			declared: kinds.All, code: code, handlers: noHandler, starts: starts,
			want: []string{`"` + event + `" has no worker handler`},
		},
		"no HTTP route": {
			declared: kinds.All, code: code, handlers: handlers, starts: without(starts, event),
			want: []string{`"` + event + `" has no HTTP route`},
		},
		"no failure hook": {
			declared: kinds.All, code: codeWith(func(k *kindModule) { k.Task = nil }), handlers: handlers, starts: starts,
			want: []string{`"` + event + `" has no failure hook`},
		},
		"no use case": {
			declared: kinds.All, code: codeWith(func(k *kindModule) { k.Service = nil }), handlers: handlers, starts: starts,
			want: []string{`"` + event + `" has no use case`},
		},
		"no worker handler constructor": {
			declared: kinds.All, code: codeWith(func(k *kindModule) { k.Handler = nil }), handlers: handlers, starts: starts,
			want: []string{`"` + event + `" has no worker handler constructor`},
		},
		// A kind whose package nothing links registers nothing.
		"no registration": {
			declared: kinds.All, code: slices.DeleteFunc(slices.Clone(code), notSample), handlers: handlers, starts: starts,
			want: []string{`"` + event + `" has no line in kindCode`},
		},
		"no names": {
			declared: declaredWith(func(k *kinds.Kind) { k.Table = "" }), code: code, handlers: handlers, starts: starts,
			want: []string{`"` + event + `" has no event type, operation kind, resource type or table`},
		},
		"declared twice": {
			declared: append(slices.Clone(kinds.All), sample), code: code, handlers: handlers, starts: starts,
			want: []string{`"` + event + `" is declared twice`},
		},
		"registered twice": {
			declared: kinds.All, code: append(slices.Clone(code), code[0]), handlers: handlers, starts: starts,
			want: []string{`line of kindCode for task kind "` + code[0].EventType + `", which is not declared once`},
		},
		"a kind left out of the list": {
			declared: slices.DeleteFunc(slices.Clone(kinds.All), func(k kinds.Kind) bool { return k.EventType == event }),
			code:     code, handlers: handlers, starts: starts,
			want: []string{
				`line of kindCode for task kind "` + event + `", which is not declared once`,
				`worker handler for "` + event + `", which is no declared task kind`,
				`starts "` + event + `", which is no declared task kind`,
			},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			err := checkKinds(c.declared, c.code, c.handlers, c.starts)
			require.Error(t, err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// The application refuses to build when a declared kind is not
// registered (its package not linked) or a registration is of no declared
// kind.
func TestTheApplicationRefusesUnregisteredKinds(t *testing.T) {
	code := kindCode
	event := kinds.All[len(kinds.All)-1].EventType
	unregistered := slices.DeleteFunc(slices.Clone(code), func(k kindModule) bool { return k.EventType == event })
	err := fx.ValidateApp(wireKinds(kinds.All, unregistered, kindServices))
	require.ErrorContains(t, err, `"`+event+`" has no line in kindCode`)
	err = fx.ValidateApp(wireKinds(kinds.All[:len(kinds.All)-1], code, kindHandlers))
	require.ErrorContains(t, err, `line of kindCode for task kind "`+event+`", which is not declared once`)
}

// checkKinds, the wiring check of the tests, reports what each declared kind (in declared, kinds.All)
// lacks to be wired: a retention rule, its registration (checkRegistered),
// its worker handler (in handlers) and an HTTP route that starts it (in
// starts, httpapi.TaskStarts); and a handler or a route for a kind that is
// not declared (its jobs would be written and never run, or its rows
// never expire).
func checkKinds(declared []kinds.Kind, code []kindModule, handlers Handlers, starts map[string][]string) error {
	errs := []error{checkRegistered(declared, code)}
	events := map[string]bool{}
	for _, d := range declared {
		events[d.EventType] = true
		if d.Retention == kinds.Undeclared {
			errs = append(errs, missing(d.EventType, "retention rule (kinds.Kind.Retention)"))
		}
		if handlers[d.EventType] == nil {
			errs = append(errs, missing(d.EventType, "worker handler"))
		}
	}
	for event := range handlers {
		if !events[event] {
			errs = append(errs, fmt.Errorf("worker handler for %q, which is no declared task kind", event))
		}
	}
	errs = append(errs, checkStarts(declared, starts))
	return errors.Join(errs...)
}

// A line of kindCode whose use case type is not what its constructor
// builds leaves the task services without their input: the application
// refuses to build, as moduleOf says.
func TestAKindLineWithTheWrongUseCaseTypeRefusesToBuild(t *testing.T) {
	newStores := func() *stores.Service { return &stores.Service{} }
	build := func(line kindModule) error {
		return fx.ValidateApp(kindServices([]kindModule{line}),
			fx.Invoke(func(in struct {
				fx.In
				Services []any `group:"task_services"`
			}) {
			}))
	}
	require.NoError(t, build(moduleOf[*stores.Service](stores.VerifyKind, newStores, nil)))
	require.ErrorContains(t, build(moduleOf[*media.Service](stores.VerifyKind, newStores, nil)), "*media.Service")
}
