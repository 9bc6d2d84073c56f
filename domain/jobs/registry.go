package jobs

// Registration is the code of one task kind: the kind (names and failure
// hook), the constructor of the use case that starts its tasks and the
// constructor of the worker handler that runs them (a *Handler, which
// knows its event type). The application lists one per kind, explicitly
// (app/kind_list.go), and checks the list against the kinds' facts
// (kinds.All); nothing registers itself at package initialization.
type Registration struct {
	Kind
	Service any
	Handler any
}
