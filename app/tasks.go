package app

import (
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/netguard"
	"github.com/oncehq/once/adapters/objectstore/localfs"
	"github.com/oncehq/once/adapters/objectstore/memstore"
	"github.com/oncehq/once/adapters/objectstore/s3store"
	"github.com/oncehq/once/domain/media"
	"github.com/oncehq/once/domain/products"
	"github.com/oncehq/once/domain/webhooks"
	"github.com/oncehq/once/ports"
)

// TasksModule provides the use cases that start background tasks (one
// per task kind, as kindCode lists them: withKindsCode), the
// products they work on and the object store they write to.
func TasksModule() fx.Option {
	return fx.Module("tasks",
		fx.Provide(
			newObjectStore,
			FetchConfig.fetchPolicy,
			fx.Annotate(netguard.NewResolver, fx.As(new(ports.HostResolver))),
			products.NewService,
			webhooks.NewService,
			LimitsConfig.webhookLimits,
		),
		withKindsCode(kindServices),
		fx.Decorate(withURLTTL),
	)
}

// withURLTTL gives the media service the configured life of its
// pre-signed URLs.
func withURLTTL(s *media.Service, cfg ObjectStoreConfig) *media.Service {
	s.URLTTL = cfg.S3URLTTL
	return s
}

// newObjectStore picks the object store: memory on the embedded default
// (objects live as long as the embedded database), an S3 bucket when
// configured, a local directory otherwise.
func newObjectStore(cfg ObjectStoreConfig, db DatabaseConfig) (ports.ObjectStore, error) {
	switch cfg.store(db.Embedded()) {
	case ObjectStoreMemory:
		return memstore.New(), nil
	case ObjectStoreS3:
		return s3store.New(cfg.s3())
	default:
		return localfs.New(cfg.ObjectStoreDir)
	}
}
