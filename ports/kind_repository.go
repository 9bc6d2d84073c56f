package ports

import (
	"fmt"
	"reflect"
)

// Repository is tx's repository of the port R, the repository of a kind
// of task (SyncRepository, PublicationRepository, ...): Tx has no method
// per kind, each adapter registers the kind's repository in the kind's
// own file instead. R is checked at compile time where the adapter
// registers it and where a use case asks for it; that an adapter has
// registered every kind's is checked by the contract suite, which runs
// every kind's repository on both adapters. It panics on a port no
// adapter registered, a programming error.
func Repository[R any](tx Tx) R {
	port := reflect.TypeFor[R]()
	r, ok := tx.KindRepository(port).(R)
	if !ok {
		panic(fmt.Sprintf("ports: this transaction has no repository %v", port))
	}
	return r
}

// KindRepositories is an adapter's registry of the kinds' repositories
// over its transaction type T, by port; each kind's file of the adapter
// adds its own with Register, and the adapter's Tx answers KindRepository
// with Of.
type KindRepositories[T any] map[reflect.Type]func(T) any

// Register makes newRepo the repository of the port R in every
// transaction of the adapter of repos. It returns true, so a kind's file
// registers from a package-level declaration.
func Register[R, T any](repos KindRepositories[T], newRepo func(T) R) bool {
	repos[reflect.TypeFor[R]()] = func(t T) any { return newRepo(t) }
	return true
}

// Of is the repository of the port whose type is port in the transaction
// t, nil if none is registered.
func (repos KindRepositories[T]) Of(t T, port reflect.Type) any {
	if newRepo, ok := repos[port]; ok {
		return newRepo(t)
	}
	return nil
}
