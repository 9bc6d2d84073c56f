package kinds

import (
	"time"

	"github.com/oncehq/once/domain/model"
)

// AITask asks a model for a product's text or category. A text is asked
// for while someone edits the product: after two hours of the provider
// failing, it is more use to say so than to keep trying.
var AITask = Kind{EventType: model.EventAITask, OperationKind: model.OperationAITask, ResourceType: "ai_task", Table: "ai_tasks", Retention: ExpiresFinished,
	RetryFor: 2 * time.Hour}
