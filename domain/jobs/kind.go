package jobs

import (
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/model"
)

// Names are what the jobs of one task kind go by, read from the kind's
// descriptor (kinds.Kind) by its Task (TaskTable, StatusTable), so its
// use case, its handler and the list of kinds say the same names.
type Names struct {
	// EventType is the outbox event that asks a worker for a task: the
	// worker runs the handler of that event type, and BullMQ sends it to
	// the queue named like it unless configured otherwise.
	EventType string
	// OperationKind is the kind of the operations that track the tasks,
	// which users read and filter by.
	OperationKind string
	// ResourceType names the task's row in operations and outbox events.
	ResourceType string
}

// namesOf are the names of the jobs of kind.
func namesOf(kind kinds.Kind) Names {
	return Names{EventType: kind.EventType, OperationKind: kind.OperationKind, ResourceType: kind.ResourceType}
}

// Route is where a job's external call goes and which jobs it runs in
// order with (model.JobSpec's Destination and OrderingKey). Every kind
// states its own when it starts a job; the zero Route is a job that calls
// nothing outside and needs no order (a media's processing).
type Route struct {
	Destination model.Destination
	OrderingKey string
}

// StoreRoute is the route of a job that calls store's platform for its
// shop, ordered by orderingKey ("" for none): the platform's quotas are
// per shop.
func StoreRoute(store model.Store, orderingKey string) Route {
	return Route{Destination: store.Destination(), OrderingKey: orderingKey}
}

// Spec is the model.JobSpec of a job of this kind on the row resourceID,
// going by route, whose event payload builds (see model.NewJob).
func (n Names) Spec(resourceID uuid.UUID, route Route, payload func(model.JobOperation) any) model.JobSpec {
	return model.JobSpec{
		OperationKind: n.OperationKind, ResourceType: n.ResourceType, ResourceID: resourceID,
		EventType: n.EventType, Payload: payload,
		Destination: route.Destination, OrderingKey: route.OrderingKey,
	}
}

// Kind is one task kind as its code declares it: its names and its
// failure hook, the Task that Failures ends when a worker gives up on a
// job of the kind and reopens on re-drive. Each kind declares it once,
// beside its use case, from its Task (TaskRow.Kind): catalog.Kind,
// stores.VerifyKind; app/kind_list.go lists it with its code.
type Kind struct {
	Names
	Task Task
}

// Kind is the task kind r is the Task of.
func (r TaskRow[T, S]) Kind() Kind { return Kind{Names: r.Names, Task: r} }
