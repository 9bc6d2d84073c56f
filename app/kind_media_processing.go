package app

import "github.com/oncehq/once/domain/media"

// The media processing's code in taskKinds.
var _ = registerKind(media.Kind, media.NewService, media.NewProcessHandler)
