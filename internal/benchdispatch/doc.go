// Package benchdispatch measures the outbox Dispatcher end to end on the
// machine it runs on: producers commit events through the real unit of work
// into a fresh PostgreSQL database, K Dispatchers (the real code, real
// LISTEN/NOTIFY wake-ups) move them to a real broker, and the time from each
// commit to the broker accepting the event is recorded. It backs
// `once bench dispatch` and the numbers quoted in DESIGN §8.
//
// Every run bootstraps its own uniquely named database and login roles, and
// its own broker topic prefix, and removes them afterwards, also when it
// fails or is interrupted.
package benchdispatch
