package app

import (
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/simulator/aisim"
	"github.com/oncehq/once/adapters/simulator/materialsim"
	"github.com/oncehq/once/adapters/simulator/platformsim"
	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/ports"
)

// externalSystemsModule provides the systems the workers call (the
// marketplace platform, the AI provider, the material source): HTTP
// clients of `once sim` when ONCE_SIM_URL is set, so their effects live in
// the simulator's durable ledger, otherwise the in-process simulators. A
// real integration replaces a provider here.
func externalSystemsModule(simURL string) fx.Option {
	switch {
	case simURL != "":
		return fx.Provide(
			WorkerConfig.simClient,
			func(c *simhttp.Client) ports.PlatformGateway { return c },
			func(c *simhttp.Client) ports.AIProvider { return c },
			func(c *simhttp.Client) ports.MaterialSource { return c },
		)
	default:
		return inProcessSystems
	}
}

// inProcessSystems are the simulators inside this process: their record
// of effects lives and dies with it (the embedded default, and tests).
var inProcessSystems = fx.Provide(
	func() *platformsim.Sim { return platformsim.New() },
	func(s *platformsim.Sim) ports.PlatformGateway { return s },
	func() *materialsim.Sim { return materialsim.New() },
	func(s *materialsim.Sim) ports.MaterialSource { return s },
	func() *aisim.Sim { return aisim.New() },
	func(s *aisim.Sim) ports.AIProvider { return s },
)
