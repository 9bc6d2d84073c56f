package jobs

import "slices"

// Registration is the code of one task kind, registered from the kind's
// own package (Register): the kind (names and failure hook), the
// constructor of the use case that starts its tasks and the constructor
// of the worker handler that runs them (a *Handler, which knows its event
// type). The application wires every registration and checks them
// against the list of kinds (kinds.All).
type Registration struct {
	Kind
	Service any
	Handler any
}

// registrations are the kinds' code in the order their packages
// registered; read through Registered.
var registrations []Registration

// Register adds the code of kind: service and handler are constructors
// (fx resolves their parameters). A kind's package registers from a
// package-level declaration (var Kind = jobs.Register(...)), so whatever
// links the package registers its kind before any importer's code runs.
// It returns kind, for that declaration.
func Register(kind Kind, service, handler any) Kind {
	registrations = append(registrations, Registration{Kind: kind, Service: service, Handler: handler})
	return kind
}

// Registered are the registrations made so far. Read it when wiring, in
// a function: a package variable computed from it sees only the kinds
// whose packages were initialized before its own.
func Registered() []Registration { return slices.Clone(registrations) }
