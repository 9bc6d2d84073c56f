// Package sdktest holds a client generated from openapi/openapi-3.0.yaml by
// oapi-codegen, and a test that drives a whole scenario against a running
// server with it. `make openapi-check` fails if the generated client is
// stale.
package sdktest
