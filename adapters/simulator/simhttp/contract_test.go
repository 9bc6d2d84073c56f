package simhttp_test

import (
	"testing"
	"time"

	"github.com/oncehq/once/adapters/simulator/aisim"
	"github.com/oncehq/once/adapters/simulator/materialsim"
	"github.com/oncehq/once/adapters/simulator/platformsim"
	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/testsupport/externaltest"
)

// The in-process simulators, as the unit tests use them.
func TestSimContractInProcess(t *testing.T) {
	externaltest.Run(t, func(t *testing.T) externaltest.Systems {
		p, a, m := platformsim.New(), aisim.New(), materialsim.New()
		return externaltest.Systems{
			Platform: p, AI: a, Material: m,
			Effects: func(_ *testing.T, token string) int { return p.Effects(token) + a.ChargesFor(token) },
			FailNext: func(_ *testing.T, system externaltest.System, n int, url string) {
				switch system {
				case externaltest.Platform:
					p.FailNext(n, nil)
				case externaltest.AI:
					a.FailNext(n, nil)
				case externaltest.Material:
					m.FailNext(url, n, nil)
				}
			},
			LoseNextAnswer: func(_ *testing.T, system externaltest.System) {
				if system == externaltest.Platform {
					p.FailAfterEffect(1)
				} else {
					a.FailAfterCharge(1)
				}
			},
		}
	})
}

// The shipped HTTP clients against `once sim`'s server, effects counted
// in its ledger and faults injected through its admin API.
func TestSimContractHTTP(t *testing.T) {
	externaltest.Run(t, func(t *testing.T) externaltest.Systems {
		s := startSim(t, "")
		c := s.client(t, 5*time.Second)
		return externaltest.Systems{
			Platform: c, AI: c, Material: c,
			Effects: s.effects,
			FailNext: func(t *testing.T, _ externaltest.System, n int, _ string) {
				s.inject(t, simhttp.Fault{Action: simhttp.ActionFail, Times: n})
			},
			LoseNextAnswer: func(t *testing.T, _ externaltest.System) {
				s.inject(t, simhttp.Fault{Action: simhttp.ActionFailAfter})
			},
		}
	})
}
