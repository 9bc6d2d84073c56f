// Package objectstore holds what every ports.ObjectStore adapter shares: the
// rule for valid keys and the digest of stored content.
//
// The adapters live in sub-packages named after what they wrap: memstore
// (process memory, with counters of side effects for tests), localfs (a
// directory on the local file system) and s3store (an S3-compatible bucket,
// which can also pre-sign requests: ports.ObjectPresigner).
// testsupport/objectstoretest is the contract suite all pass.
package objectstore
