// Package objectstore holds what every ports.ObjectStore adapter shares: the
// rule for valid keys and the digest of stored content.
//
// The adapters live in sub-packages named after what they wrap: memstore
// (process memory, with counters of side effects for tests) and localfs (a
// directory on the local file system). objectstoretest is the contract suite
// both pass.
package objectstore
