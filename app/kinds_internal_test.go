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
	"github.com/oncehq/once/domain/catalog"
	"github.com/oncehq/once/domain/jobs"
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

// Every declared task kind has its names, its use case, its failure hook,
// its worker handler and an HTTP route that starts it.
func TestEveryTaskKindIsWired(t *testing.T) {
	handlers, starts := wiring(t)
	require.NoError(t, checkKinds(taskKinds, handlers, starts))
	assert.Len(t, handlers, len(taskKinds))
	assert.ElementsMatch(t, eventTypes, slices.Collect(maps.Keys(handlers)), "BullMQ checks the queues of every kind")
}

// checkKinds can fail: a kind that lacks a piece is named with what it
// lacks.
func TestAKindNotFullyWiredIsReported(t *testing.T) {
	handlers, starts := wiring(t)
	sync := catalog.Kind.EventType
	without := func(m map[string][]string, key string) map[string][]string {
		m = maps.Clone(m)
		delete(m, key)
		return m
	}
	kindsWith := func(change func(k *taskKind)) []taskKind {
		kinds := slices.Clone(taskKinds)
		for i := range kinds {
			if kinds[i].EventType == sync {
				change(&kinds[i])
			}
		}
		return kinds
	}
	noSyncHandler := maps.Clone(handlers)
	delete(noSyncHandler, sync)
	declaredOnly := taskKind{Kind: jobs.Kind{Names: jobs.Names{EventType: "thing.do", OperationKind: "thing.do", ResourceType: "thing"}}}

	cases := map[string]struct {
		kinds    []taskKind
		handlers Handlers
		starts   map[string][]string
		want     []string
	}{
		"a kind declared and nothing else": {
			kinds: append(slices.Clone(taskKinds), declaredOnly), handlers: handlers, starts: starts,
			want: []string{
				`"thing.do" has no failure hook`, `"thing.do" has no use case`,
				`"thing.do" has no worker handler`, `"thing.do" has no HTTP route`,
			},
		},
		"no worker handler": {
			kinds: taskKinds, handlers: noSyncHandler, starts: starts,
			want: []string{`"` + sync + `" has no worker handler`},
		},
		"no HTTP route": {
			kinds: taskKinds, handlers: handlers, starts: without(starts, sync),
			want: []string{`"` + sync + `" has no HTTP route`},
		},
		"no failure hook": {
			kinds: kindsWith(func(k *taskKind) { k.Task = nil }), handlers: handlers, starts: starts,
			want: []string{`"` + sync + `" has no failure hook`},
		},
		"no names": {
			kinds: kindsWith(func(k *taskKind) { k.ResourceType = "" }), handlers: handlers, starts: starts,
			want: []string{`"` + sync + `" has no event type, operation kind or resource type`},
		},
		"declared twice": {
			kinds: append(slices.Clone(taskKinds), taskKinds[0]), handlers: handlers, starts: starts,
			want: []string{`"` + taskKinds[0].EventType + `" is declared twice`},
		},
		"a kind left out of the list": {
			kinds:    slices.DeleteFunc(slices.Clone(taskKinds), func(k taskKind) bool { return k.EventType == sync }),
			handlers: handlers, starts: starts,
			want: []string{
				`worker handler for "` + sync + `", which is no declared task kind`,
				`HTTP route [startCatalogSync] starts "` + sync + `", which is no declared task kind`,
			},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			err := checkKinds(c.kinds, c.handlers, c.starts)
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

	var withoutSync []jobHandler
	for _, h := range all {
		if h.Event() != catalog.Kind.EventType {
			withoutSync = append(withoutSync, h)
		}
	}
	_, err = newHandlers(handlersIn{Handlers: withoutSync})
	require.ErrorContains(t, err, "task kind "+catalog.Kind.EventType+" has no worker handler")

	_, err = newHandlers(handlersIn{Handlers: append(all, handlers[catalog.Kind.EventType].(jobHandler))})
	require.ErrorContains(t, err, "two worker handlers for event type "+catalog.Kind.EventType)
}
