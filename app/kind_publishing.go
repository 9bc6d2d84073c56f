package app

import "github.com/oncehq/once/domain/publishing"

// The publishing's code in taskKinds.
var _ = registerKind(publishing.Kind, publishing.NewService, publishing.NewPublishHandler)
