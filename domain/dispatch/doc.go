// Package dispatch delivers outbox events to the queue and keeps the outbox
// healthy: the Dispatcher claims due events workspace by workspace, publishes
// them with the event id as the message id and marks them dispatched (or
// releases them with backoff, or parks them as dead letters); NotifyOnCommit
// wakes Dispatchers after a producer committed; the RetentionCleaner deletes
// old dispatched events; Admin lets operators list and re-drive dead letters.
//
// Attempts count what may be an event's own fault: a publish the broker
// refused or that failed for a reason of the event's, and a takeover of its
// expired lease (the Dispatcher holding it crashed or hung, perhaps because
// of it), so a poison event ends in dead_letter. A broker that cannot be
// reached costs no attempt: a circuit breaker stops the Dispatcher as a
// whole, hands the claimed events back uncounted and due at once, probes
// the broker now and then, and resumes as soon as it answers.
//
// Delivery is at-least-once. A crash between publish and mark, a lease that
// expired during a slow publish, or a publish error after the broker accepted
// some messages all lead to a second delivery with the same message id;
// consumers are re-entrant and never rely on the queue delivering once.
package dispatch
