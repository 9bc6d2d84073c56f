// Package ai holds AI jobs on products (a description, a category
// suggestion, an image): the use case that accepts a job over HTTP, and the
// worker that calls the provider once and bills the workspace once, however
// often the job is delivered.
package ai
