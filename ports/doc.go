// Package ports declares the interfaces the domain needs from the outside
// world. It speaks in domain types and imports no adapter technology; every
// adapter asserts the interfaces it implements.
package ports
