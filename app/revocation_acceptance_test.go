package app_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
)

// twoServes are two `once serve` over one PostgreSQL database, sharing
// one manual clock (the TTLs and refresh intervals they decide by), as
// two processes behind a balancer; the first's workspace and admin are
// the test's.
func twoServes(t *testing.T) (here, there *apitest.Server, clock *apitest.ManualClock) {
	t.Helper()
	db := pgtest.New(t)
	clock = apitest.NewManualClock()
	cfg := apitest.Config(db.AppDSN)
	here = apitest.Start(t, cfg, db, apitest.WithClock(clock))
	there = apitest.Start(t, cfg, db, apitest.WithClock(clock))
	return here, there, clock
}

// refusedWithin polls read, moving clock on by step before each poll,
// until it answers want; it fails when polls polls have gone by without.
// It never waits on the wall clock: the bound is in clock's time.
func refusedWithin(t *testing.T, clock *apitest.ManualClock, step time.Duration, polls int, want int, read func() apitest.Response) apitest.Response {
	t.Helper()
	var last apitest.Response
	for range polls {
		clock.Advance(step)
		if last = read(); last.Status == want {
			return last
		}
	}
	t.Fatalf("still %d after %d polls of %s: %s", last.Status, polls, step, last.Body)
	return last
}

// A member removed through one serve is refused (403) by another within
// the membership cache's TTL (ONCE_AUTH_CACHE_TTL, 5 s by default), which
// that process's cache had remembered before the removal.
func TestMemberRemovedThroughOneServeIsRefusedByAnotherWithinTheTTL(t *testing.T) {
	here, there, clock := twoServes(t)
	member := uuid.New()
	r := here.Do(t, http.MethodPost, "/v1/members", map[string]any{"user_id": member, "role": "member"}, nil)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	token := here.TokenFor(t, here.Workspace, member)
	read := func() apitest.Response {
		return there.Do(t, http.MethodGet, "/v1/operations?limit=1", nil, map[string]string{"Authorization": "Bearer " + token})
	}
	require.Equal(t, http.StatusOK, read().Status, "the member, remembered by the other serve")

	r = here.Do(t, http.MethodDelete, "/v1/members/"+member.String(), nil, nil)
	require.Equal(t, http.StatusNoContent, r.Status, string(r.Body))
	// 5 s of the clock in 1 s steps, and one more: refused by then.
	refused := refusedWithin(t, clock, time.Second, 6, http.StatusForbidden, read)
	require.Equal(t, "FORBIDDEN", refused.Problem(t).Code)
}
