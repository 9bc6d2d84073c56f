package kinds

import "github.com/oncehq/once/domain/model"

// MediaProcess is a media's processing: its tasks are operations on the
// media, which outlives them.
var MediaProcess = Kind{EventType: model.EventMediaProcess, OperationKind: model.OperationMediaProcess, ResourceType: "media", Table: "media", Retention: KeptWithRow}
