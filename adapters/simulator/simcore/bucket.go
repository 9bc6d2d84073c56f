package simcore

import (
	"errors"
	"math"
	"time"
)

// BucketSize is how a leaky bucket meters calls, as Shopify meters its
// API: each call pours one unit in, the bucket leaks LeakPerSecond units a
// second, and a call that would overflow Capacity is refused.
type BucketSize struct {
	Capacity      int     `json:"capacity"`
	LeakPerSecond float64 `json:"leak_per_second"`
}

// Validate refuses a bucket that could never admit a call or never drain.
func (s BucketSize) Validate() error {
	if s.Capacity < 1 {
		return errors.New("a bucket's capacity must be at least 1")
	}
	if !(s.LeakPerSecond > 0) || math.IsInf(s.LeakPerSecond, 0) {
		return errors.New("a bucket must leak a positive, finite rate")
	}
	return nil
}

// Bucket is one leaky bucket, read and poured at the times its caller
// gives, so a test's clock decides when it drains. It is not safe for
// concurrent use: its owner locks.
type Bucket struct {
	size  BucketSize
	level float64
	at    time.Time
}

// NewBucket returns an empty bucket of size.
func NewBucket(size BucketSize) *Bucket { return &Bucket{size: size} }

// drain leaks what flowed out since the last look.
func (b *Bucket) drain(now time.Time) {
	if !b.at.IsZero() && now.After(b.at) {
		b.level = max(0, b.level-now.Sub(b.at).Seconds()*b.size.LeakPerSecond)
	}
	if now.After(b.at) {
		b.at = now
	}
}

// Wait is how long a call must wait at now before one more unit fits:
// zero if it fits now.
func (b *Bucket) Wait(now time.Time) time.Duration {
	b.drain(now)
	over := b.level + 1 - float64(b.size.Capacity)
	if over <= 0 {
		return 0
	}
	return time.Duration(math.Ceil(over / b.size.LeakPerSecond * float64(time.Second)))
}

// Pour adds one call at now; check Wait first, Pour does not refuse.
func (b *Bucket) Pour(now time.Time) {
	b.drain(now)
	b.level++
}

// Used is the level at now, rounded up: the calls still counted against
// the capacity, as a quota header reports them.
func (b *Bucket) Used(now time.Time) int {
	b.drain(now)
	// Float leaking leaves crumbs (39.0000000001): a micro-unit is no call.
	return int(math.Ceil(b.level - 1e-6))
}

// Capacity is the bucket's capacity.
func (b *Bucket) Capacity() int { return b.size.Capacity }
