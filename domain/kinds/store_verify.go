package kinds

import "github.com/oncehq/once/domain/model"

// StoreVerify is a store's credential verification: its tasks are
// operations on the store, which outlives them.
var StoreVerify = Kind{EventType: model.EventStoreCredentialsVerify, OperationKind: model.OperationStoreVerify, ResourceType: "store", Table: "stores", Retention: KeptWithRow}
