package app

import "github.com/oncehq/once/domain/ai"

// The AI task's code in taskKinds.
var _ = registerKind(ai.Kind, ai.NewService, ai.NewTaskHandler)
