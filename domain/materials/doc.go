// Package materials holds the transfer of collected material (supplier
// images the collector found) into our own object store: the use case that
// accepts a transfer over HTTP, checking that every source URL points at a
// public address (domain/fetchpolicy, hosts resolved through
// ports.HostResolver), and the worker that copies it item by item,
// resumably.
package materials
