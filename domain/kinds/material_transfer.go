package kinds

import "github.com/oncehq/once/domain/model"

// MaterialTransfer copies a supplier's files into the object store.
var MaterialTransfer = Kind{EventType: model.EventMaterialTransfer, OperationKind: model.OperationMaterialTransfer, ResourceType: "material_transfer", Table: "material_transfers", Retention: ExpiresFinished}
