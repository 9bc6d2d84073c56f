// Package testkit holds small test doubles shared by the domain and
// acceptance tests: a unit of work that crashes before a chosen commit, and
// a log buffer safe for concurrent writers, a host resolver answering from
// a table, a clock that moves only when told.
package testkit
