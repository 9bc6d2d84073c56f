// Package simcore is what the simulated external systems
// (adapters/simulator/aisim, platformsim, materialsim) do alike: they fail
// on demand before they act or lose the answer after (Faults), take a
// latency a caller may give up on (Faults.Wait), write what they do to a
// journal before they do it (Record), count what they did (Tally), meter
// calls as a rate-limited API does (Bucket), and record how many calls of
// one key were in flight at once (Concurrency).
package simcore
