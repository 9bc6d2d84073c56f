package queue

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Only a call that started after the sleepers were parked says their
// destination is back: one that started before the breaker opened and
// answers late says nothing of now, and wakes no one.
func TestSlotsWakeOnlyForACallStartedAfterTheSleepersParked(t *testing.T) {
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	clock := now
	gate := &fakeGate{refuse: map[string]time.Time{}}
	s := newSlots(4, 2*time.Second, gate, func() time.Time { return clock }) // read under s.mu
	woken := make(chan string, 4)
	s.woken = func(d string, _ map[uuid.UUID]int) { woken <- d }
	ws := uuid.New()
	tick := func(d time.Duration) {
		s.mu.Lock()
		clock = clock.Add(d)
		s.mu.Unlock()
	}

	late := acquireAsync(s, context.Background(), ws, "shopify/a", "") // a call of 30 s
	<-late.done
	require.NotNil(t, late.release)
	tick(10 * time.Second)
	gate.mu.Lock()
	gate.refuse["shopify/a"] = clock.Add(time.Minute) // the breaker opened meanwhile
	gate.mu.Unlock()
	for range 2 { // a probe, and a sleeper
		<-acquireAsync(s, context.Background(), ws, "shopify/a", "").done
	}
	tick(20 * time.Second)
	late.release(CallResult{})
	s.mu.Lock()
	require.Contains(t, s.asleep, "shopify/a", "a call started before the outage woke the sleepers")
	s.mu.Unlock()

	gate.mu.Lock()
	delete(gate.refuse, "shopify/a")
	gate.mu.Unlock()
	tick(time.Minute)
	probe := acquireAsync(s, context.Background(), ws, "shopify/a", "")
	<-probe.done
	probe.release(CallResult{})
	assert.Equal(t, "shopify/a", <-woken, "a call started since wakes them")
	assert.Empty(t, woken, "once")
}

// A job that was throttled and then succeeded had waited for a pace, not
// for an outage: it wakes no one (each such job woke its workspace's
// sleepers, a Wake transaction per job).
func TestSlotsLetAThrottledJobWakeNoOne(t *testing.T) {
	s := newSlots(1, 2*time.Second, nil, nil)
	s.woken = func(string, map[uuid.UUID]int) {}
	w := throttledBy("shopify/a")
	s.answeredAfterWait(uuid.New(), "shopify/a", w.Kind, w.For)
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Empty(t, s.wokenAt, "woke its workspace's sleepers")
}

// A job of a key whose line sleeps through an outage, arriving after the
// line was parked, waits behind it with the line's reason, so the wake
// that brings the line back brings it back too: parked as "waiting
// behind an earlier job", it matched no wake and slept the full wait.
func TestSlotsParkALaterArrivalOfASleepingKeyToBeWokenWithIt(t *testing.T) {
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	gate := &fakeGate{refuse: map[string]time.Time{"shopify/a": now.Add(time.Minute)}}
	s := newSlots(2, 2*time.Second, gate, func() time.Time { return now })
	ws := uuid.New()
	<-acquireAsync(s, context.Background(), ws, "shopify/a", "").done // the probe
	sleeper := acquireAsync(s, context.Background(), ws, "shopify/a", "catalog/1")
	<-sleeper.done
	require.NotNil(t, sleeper.wait)

	_, behind, err := s.acquire(context.Background(), ws, "shopify/a", "catalog/1", nil)
	require.NoError(t, err)
	require.NotNil(t, behind)
	assert.True(t, behind.until.After(sleeper.wait.until), "behind the sleeper")
	assert.Equal(t, sleeper.wait.wait, behind.wait, "woken with it")
	assert.Same(t, sleeper.wait.asleep, behind.asleep)
}
