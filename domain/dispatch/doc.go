// Package dispatch delivers outbox events to the queue and keeps the outbox
// healthy: the Dispatcher claims due events workspace by workspace, publishes
// them with the event id as the message id and marks them dispatched (or
// releases them with backoff, or parks them as dead letters); NotifyOnCommit
// wakes Dispatchers after a producer committed; the RetentionCleaner deletes
// old dispatched events; Admin lets operators list and re-drive dead letters.
//
// Delivery is at-least-once. A crash between publish and mark, a lease that
// expired during a slow publish, or a publish error after the broker accepted
// some messages all lead to a second delivery with the same message id;
// consumers are re-entrant and never rely on the queue delivering once.
package dispatch
