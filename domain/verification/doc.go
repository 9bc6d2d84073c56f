// Package verification holds the worker side of store.credentials.verify:
// the handler that asks the platform whether a store's credentials work and
// records the verdict on the store and its operation.
package verification
