package app

import (
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/netguard"
	"github.com/oncehq/once/adapters/objectstore/localfs"
	"github.com/oncehq/once/adapters/objectstore/memstore"
	"github.com/oncehq/once/domain/ai"
	"github.com/oncehq/once/domain/catalog"
	"github.com/oncehq/once/domain/materials"
	"github.com/oncehq/once/domain/media"
	"github.com/oncehq/once/domain/products"
	"github.com/oncehq/once/domain/publishing"
	"github.com/oncehq/once/ports"
)

// TasksModule provides the use cases that start background tasks and
// the object store they write to.
var TasksModule = fx.Module("tasks",
	fx.Provide(
		newObjectStore,
		Config.fetchPolicy,
		fx.Annotate(netguard.NewResolver, fx.As(new(ports.HostResolver))),
		products.NewService,
		media.NewService,
		materials.NewService,
		publishing.NewService,
		catalog.NewService,
		ai.NewService,
	),
)

// newObjectStore picks the object store: memory on the embedded default
// (objects live as long as the embedded database), a local directory
// otherwise.
func newObjectStore(cfg Config) (ports.ObjectStore, error) {
	switch cfg.objectStore() {
	case ObjectStoreMemory:
		return memstore.New(), nil
	default:
		return localfs.New(cfg.ObjectStoreDir)
	}
}
