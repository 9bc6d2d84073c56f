package app

import "github.com/oncehq/once/domain/stores"

// The store verification's code in taskKinds.
var _ = registerKind(stores.VerifyKind, stores.NewService, stores.NewVerifyHandler)
