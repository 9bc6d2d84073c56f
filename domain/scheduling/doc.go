// Package scheduling holds the worker's scheduling decisions that need
// nothing but their inputs and the time they are given: the fair share of
// a worker's slots by what each workspace holds (Holdings), what a
// message does after its destination refused it a call (AfterRefusal: a
// pure decision), the refusals remembered until they end (Refusals) and
// the turns of the messages parked for a paced destination
// (BookedTurns). adapters/queue's slots carry them out: they hold the
// lock, answer the waiting goroutines, arm the timers and start the
// wakes. No type here holds more than one policy, and none reads a clock.
package scheduling
