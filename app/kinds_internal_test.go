package app

import (
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
	fxtest.New(t, Base(cfg, slog.New(slog.DiscardHandler)), inProcessSystems, kindHandlers(taskKinds), fx.Populate(&handlers))
	return handlers, httpapi.TaskStarts(httpapi.NewAPI(http.NewServeMux(), httpapi.Deps{}))
}

// Every declared task kind has its names, its retention rule, its code
// (use case and failure hook), its worker handler and an HTTP route that
// starts it.
func TestEveryTaskKindIsWired(t *testing.T) {
	handlers, starts := wiring(t)
	require.NoError(t, checkKinds(kinds.All, taskKinds, handlers, starts))
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
	codeWith := func(change func(k *taskKind)) []taskKind {
		code := slices.Clone(taskKinds)
		for i := range code {
			if code[i].EventType == event {
				change(&code[i])
			}
		}
		return code
	}
	notSample := func(k taskKind) bool { return k.EventType == event }
	noHandler := maps.Clone(handlers)
	delete(noHandler, event)
	thing := kinds.Kind{EventType: "thing.do", OperationKind: "thing.do", ResourceType: "thing", Table: "things", Retention: kinds.ExpiresFinished}

	cases := map[string]struct {
		declared []kinds.Kind
		code     []taskKind
		handlers Handlers
		starts   map[string][]string
		want     []string
	}{
		"a kind declared and nothing else": {
			declared: append(slices.Clone(kinds.All), thing), code: taskKinds, handlers: handlers, starts: starts,
			want: []string{`"thing.do" has no code`, `"thing.do" has no worker handler`, `"thing.do" has no HTTP route`},
		},
		"no retention rule": {
			declared: declaredWith(func(k *kinds.Kind) { k.Retention = kinds.Undeclared }), code: taskKinds, handlers: handlers, starts: starts,
			want: []string{`"` + event + `" has no retention rule`},
		},
		"no worker handler": {
			declared: kinds.All, code: taskKinds, handlers: noHandler, starts: starts,
			want: []string{`"` + event + `" has no worker handler`},
		},
		"no HTTP route": {
			declared: kinds.All, code: taskKinds, handlers: handlers, starts: without(starts, event),
			want: []string{`"` + event + `" has no HTTP route`},
		},
		"no failure hook": {
			declared: kinds.All, code: codeWith(func(k *taskKind) { k.Task = nil }), handlers: handlers, starts: starts,
			want: []string{`"` + event + `" has no failure hook`},
		},
		"no use case": {
			declared: kinds.All, code: codeWith(func(k *taskKind) { k.service = nil }), handlers: handlers, starts: starts,
			want: []string{`"` + event + `" has no use case`},
		},
		"no code": {
			declared: kinds.All, code: slices.DeleteFunc(slices.Clone(taskKinds), notSample), handlers: handlers, starts: starts,
			want: []string{`"` + event + `" has no code`},
		},
		"names that differ from the declaration": {
			declared: declaredWith(func(k *kinds.Kind) { k.ResourceType = "other" }), code: taskKinds, handlers: handlers, starts: starts,
			want: []string{`"` + event + `" is ` + sample.OperationKind + `/` + sample.ResourceType + ` in its use case`},
		},
		"no names": {
			declared: declaredWith(func(k *kinds.Kind) { k.Table = "" }), code: taskKinds, handlers: handlers, starts: starts,
			want: []string{`"` + event + `" has no event type, operation kind, resource type or table`},
		},
		"declared twice": {
			declared: append(slices.Clone(kinds.All), sample), code: taskKinds, handlers: handlers, starts: starts,
			want: []string{`"` + event + `" is declared twice`},
		},
		"code twice": {
			declared: kinds.All, code: append(slices.Clone(taskKinds), taskKinds[0]), handlers: handlers, starts: starts,
			want: []string{`code of task kind "` + taskKinds[0].EventType + `", which is not declared once`},
		},
		"a kind left out of the list": {
			declared: slices.DeleteFunc(slices.Clone(kinds.All), func(k kinds.Kind) bool { return k.EventType == event }),
			code:     taskKinds, handlers: handlers, starts: starts,
			want: []string{
				`code of task kind "` + event + `", which is not declared once`,
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

// A kind without a worker handler, or two handlers of one event type,
// refuse to start the worker.
func TestNewHandlersRefusesAMissingOrDoubledHandler(t *testing.T) {
	handlers, _ := wiring(t)
	var all []jobHandler
	for _, h := range handlers {
		all = append(all, h.(jobHandler))
	}
	_, err := newHandlers(handlersIn{Handlers: all})
	require.NoError(t, err)

	event := kinds.All[len(kinds.All)-1].EventType
	var withoutOne []jobHandler
	for _, h := range all {
		if h.Event() != event {
			withoutOne = append(withoutOne, h)
		}
	}
	_, err = newHandlers(handlersIn{Handlers: withoutOne})
	require.ErrorContains(t, err, "task kind "+event+" has no worker handler")

	_, err = newHandlers(handlersIn{Handlers: append(all, handlers[event].(jobHandler))})
	require.ErrorContains(t, err, "two worker handlers for event type "+event)
}
