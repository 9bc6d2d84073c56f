package app

import "github.com/oncehq/once/domain/catalog"

// The catalog sync's code in taskKinds.
var _ = registerKind(catalog.Kind, catalog.NewService, catalog.NewSyncHandler)
