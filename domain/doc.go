// Package domain holds the entities, value types and the error contract of
// once. It imports nothing of ours, so that ports and use cases can both speak
// in its types without import cycles.
package domain
