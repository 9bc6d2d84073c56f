package app

import (
	"github.com/oncehq/once/domain/ai"
	"github.com/oncehq/once/domain/catalog"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/materials"
	"github.com/oncehq/once/domain/media"
	"github.com/oncehq/once/domain/publishing"
	"github.com/oncehq/once/domain/stores"
)

// kindCode is the code of every kind of task, one line each, as formance
// lists its drivers: the kind (names and failure hook), its use case and
// its worker handler, and the type of the use case the HTTP routes find it
// by. A kind is added here and in kinds.All (its facts); checkRegistered
// refuses a list that misses one or has one too many.
var kindCode = []kindModule{
	moduleOf[*stores.Service](stores.VerifyKind, stores.NewService, stores.NewVerifyHandler),
	moduleOf[*media.Service](media.Kind, media.NewService, media.NewProcessHandler),
	moduleOf[*materials.Service](materials.Kind, materials.NewService, materials.NewTransferHandler),
	moduleOf[*publishing.Service](publishing.Kind, publishing.NewService, publishing.NewPublishHandler),
	moduleOf[*catalog.Service](catalog.Kind, catalog.NewService, catalog.NewSyncHandler),
	moduleOf[*ai.Service](ai.Kind, ai.NewService, ai.NewTaskHandler),
}

// kindModule is one line of kindCode: the kind's registration, and the
// provider that puts its use case, once built, among the task services
// (a value of type any, as httpapi.Deps.TaskServices holds them).
type kindModule struct {
	jobs.Registration
	asTaskService any
}

// moduleOf is the line of a kind whose use case, built by service, is an
// S. A wrong S leaves the provider without its input, and the application
// refuses to build (TestEveryTaskKindIsWired).
func moduleOf[S any](kind jobs.Kind, service, handler any) kindModule {
	return kindModule{
		Registration:  jobs.Registration{Kind: kind, Service: service, Handler: handler},
		asTaskService: func(s S) any { return s },
	}
}
