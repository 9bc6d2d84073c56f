package app

import "errors"

// ErrJobLoss is why `once serve` refuses PostgreSQL with the memory queue:
// the Dispatcher (and the relay) mark an event dispatched once it is in the
// process's channel, so the jobs in the channel when the process dies
// never run, and their operations stay running for good. The outbox
// survives the crash; the channel does not.
var ErrJobLoss = errors.New("ONCE_QUEUE=memory with DATABASE_URL loses the jobs queued in this process when it dies: " +
	"set ONCE_QUEUE to redis, amqp or bullmq (docs/brokers.md), or ONCE_ACCEPT_JOB_LOSS=true to run so anyway")

// LosesJobsOnCrash reports whether this process would hand committed
// events to the in-process queue while PostgreSQL keeps them: a Dispatcher
// or the relay publishing to ONCE_QUEUE=memory. On the embedded store
// everything dies with the process alike, the outbox too, and an API-only
// process (no Dispatcher, no relay) queues nothing.
func (c Config) LosesJobsOnCrash() bool {
	return !c.Embedded() && c.Queue == QueueMemory && (c.Dispatcher || c.RelayEnabled())
}

// JobLoss is ErrJobLoss when the process would lose jobs on a crash and
// ONCE_ACCEPT_JOB_LOSS does not say that is accepted, nil otherwise.
func (c Config) JobLoss() error {
	if c.LosesJobsOnCrash() && !c.AcceptJobLoss {
		return ErrJobLoss
	}
	return nil
}
