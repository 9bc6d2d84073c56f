package app

import "github.com/oncehq/once/domain/materials"

// The material transfer's code in taskKinds.
var _ = registerKind(materials.Kind, materials.NewService, materials.NewTransferHandler)
