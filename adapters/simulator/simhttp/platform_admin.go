package simhttp

import (
	"net/http"
	"slices"
	"time"

	"github.com/oncehq/once/adapters/simulator/simcore"
	"github.com/oncehq/once/domain"
)

// latencySetting is the body of PUT PathPlatforms/{platform}/latency.
type latencySetting struct {
	LatencyMS int64 `json:"latency_ms"`
}

// InFlight is the concurrency read-out: per key (InFlightShop,
// InFlightOrdering), the most platform calls seen in flight at once, and
// the calls of the keys asked for (a long run has many) in arrival order,
// throttled ones included (status 429).
type InFlight struct {
	MaxInFlight map[string]int            `json:"max_in_flight"`
	Calls       map[string][]simcore.Span `json:"calls"`
}

// platformRoutes serve the per-platform settings and the read-outs.
func (s *Server) platformRoutes() {
	s.platformSettingRoutes()
	s.readOutRoutes()
}

// platformSettingRoutes set and clear one platform's latency, outage and
// buckets.
func (s *Server) platformSettingRoutes() {
	at := func(method, tail string, h func(*http.Request, string) error) {
		s.mux.HandleFunc(method+" "+PathPlatforms+"/{platform}"+tail, func(w http.ResponseWriter, r *http.Request) {
			platform := r.PathValue("platform")
			err := knownPlatform(platform)
			if err == nil {
				err = h(r, platform)
			}
			if err != nil {
				writeProblem(w, asValidation(err))
				return
			}
			s.log.Info("platform setting", "platform", platform, "method", method, "setting", tail)
			w.WriteHeader(http.StatusNoContent)
		})
	}
	at(http.MethodPut, "/latency", func(r *http.Request, platform string) error {
		var l latencySetting
		if err := decodeBody(nil, r, &l); err != nil || l.LatencyMS < 0 {
			return domain.Errorf(domain.CodeValidation, "the body is {\"latency_ms\": n}, n ≥ 0")
		}
		s.platforms.update(func(p *platforms) { p.latency[platform] = time.Duration(l.LatencyMS) * time.Millisecond })
		return nil
	})
	at(http.MethodDelete, "/latency", func(_ *http.Request, platform string) error {
		s.platforms.update(func(p *platforms) { delete(p.latency, platform) })
		return nil
	})
	at(http.MethodPut, "/outage", func(_ *http.Request, platform string) error {
		s.platforms.update(func(p *platforms) { p.down[platform] = true })
		return nil
	})
	at(http.MethodDelete, "/outage", func(_ *http.Request, platform string) error {
		s.platforms.update(func(p *platforms) {
			delete(p.down, platform)
			// Up means up, whatever was scheduled.
			p.outages = slices.DeleteFunc(p.outages, func(o Outage) bool { return o.Platform == platform })
		})
		return nil
	})
	at(http.MethodPut, "/buckets/{scope}", func(r *http.Request, platform string) error {
		scope, err := bucketScope(r)
		var size simcore.BucketSize
		if err == nil {
			err = decodeBody(nil, r, &size)
		}
		if err == nil {
			err = size.Validate()
		}
		if err == nil {
			s.platforms.setBucket(scope, platform, &size)
		}
		return err
	})
	at(http.MethodDelete, "/buckets/{scope}", func(r *http.Request, platform string) error {
		scope, err := bucketScope(r)
		if err == nil {
			s.platforms.setBucket(scope, platform, nil)
		}
		return err
	})
}

// readOutRoutes serve the throttle counts, the concurrency read-out and
// the effects per shop, and forget the first two.
func (s *Server) readOutRoutes() {
	s.mux.HandleFunc("GET "+PathThrottles, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.platforms.counted())
	})
	s.mux.HandleFunc("GET "+PathConcurrency, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, InFlight{MaxInFlight: s.inFlight.MaxInFlight(), Calls: s.inFlight.Spans(r.URL.Query()["key"]...)})
	})
	s.mux.HandleFunc("GET "+PathEffects, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, platformEffectsOf(s.ledger.Entries(Filter{EffectsOnly: true})))
	})
	s.mux.HandleFunc("DELETE "+PathCounters, func(w http.ResponseWriter, _ *http.Request) {
		s.platforms.resetCounters()
		s.inFlight.Reset()
		w.WriteHeader(http.StatusNoContent)
	})
}

func bucketScope(r *http.Request) (BucketScope, error) {
	switch scope := BucketScope(r.PathValue("scope")); scope {
	case ScopeShop, ScopePlatform:
		return scope, nil
	default:
		return "", domain.Errorf(domain.CodeValidation, "the bucket scope is %q or %q", ScopeShop, ScopePlatform)
	}
}

// asValidation makes a settings error a 422 with its message.
func asValidation(err error) error {
	if domain.ErrorCode(err) == domain.CodeInternal {
		return domain.Errorf(domain.CodeValidation, "%v", err)
	}
	return err
}
