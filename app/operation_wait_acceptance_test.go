package app_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
)

// hang bounds how long a test waits for what must come: only a hang fails
// it, whatever the machine's load. What tells a read woken by the end
// from one that waited its 25 s out is Waiters.WokenUp (wokenByTheEnd),
// not the time its answer took; the latency is logged, not asserted.
const hang = 2 * time.Minute

// wokenByTheEnd waits until the end has woken n of s's waiting reads: a
// read whose wait ran out before the end was heard is never counted.
func wokenByTheEnd(t *testing.T, s *apitest.Server, n int) {
	t.Helper()
	apitest.Eventually(t, hang, "the end waking the waiting reads", func() bool { return s.Waiters.WokenUp() >= n })
}

type waitAnswer struct {
	status int
	op     apitest.Operation
	at     time.Time
}

// waitFor reads op on s with ?wait=25s as token in the background.
func waitFor(t *testing.T, s *apitest.Server, token string, op uuid.UUID) <-chan waitAnswer {
	t.Helper()
	out := make(chan waitAnswer, 1)
	req, err := http.NewRequest(http.MethodGet, s.URL+"/v1/operations/"+op.String()+"?wait=25s", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	go func() {
		var a waitAnswer
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			a.status = res.StatusCode
			apitest.Response{Status: res.StatusCode, Body: readAll(res)}.JSON(t, &a.op)
		}
		a.at = time.Now()
		out <- a
	}()
	return out
}

func readAll(res *http.Response) []byte {
	defer res.Body.Close()
	var b []byte
	buf := make([]byte, 4096)
	for {
		n, err := res.Body.Read(buf)
		b = append(b, buf[:n]...)
		if err != nil {
			return b
		}
	}
}

func answered(t *testing.T, ch <-chan waitAnswer) waitAnswer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(hang):
		t.Fatalf("no answer within %s of the end", hang)
		return waitAnswer{}
	}
}

// Two serve processes on one database: a read waiting on B answers when
// the operation ends through A, woken by A's NOTIFY after its commit.
func TestPostgresWaitIsWokenByAnEndInAnotherProcess(t *testing.T) {
	db := pgtest.New(t)
	a := apitest.Start(t, apitest.Config(db.AppDSN), db)
	b := apitest.Start(t, apitest.Config(db.AppDSN), db)
	op := a.PendingOperation(t)

	answer := waitFor(t, b, b.TokenFor(t, a.Workspace, a.User), op.ID)
	apitest.Eventually(t, hang, "the read waiting on B", func() bool { return b.Waiters.Waiting() == 1 })
	ended := a.SucceedOperation(t, op)
	wokenByTheEnd(t, b, 1)

	got := answered(t, answer)
	require.Equal(t, http.StatusOK, got.status)
	assert.Equal(t, "succeeded", got.op.Status)
	t.Logf("answered on B %s after the end committed on A", got.at.Sub(ended))
	apitest.Eventually(t, hang, "no read waiting on B", func() bool { return b.Waiters.Waiting() == 0 })
}

// 1,000 reads waiting for one operation hold no database connection: with
// all of them parked, the service's role has no more sessions than its
// pool and its LISTEN connection (the role's CONNECTION LIMIT refuses
// more), and none of them is in a transaction or running a statement. The
// end then answers every one.
func TestPostgresThousandWaitersHoldNoConnection(t *testing.T) {
	const pool, listener, waiters = 4, 1, 1000
	db := pgtest.New(t)
	role := newPoolRole(t, db, pool+listener)
	cfg := apitest.Config(role.dsn)
	cfg.DBMaxConns, cfg.DBMaxIdle = pool, pool
	s := apitest.Start(t, cfg, db)
	op := s.PendingOperation(t)

	answers := make([]<-chan waitAnswer, waiters)
	for i := range answers {
		answers[i] = waitFor(t, s, s.Token, op.ID)
	}
	apitest.Eventually(t, time.Minute, "every read waiting", func() bool { return s.Waiters.Waiting() == waiters })

	var sessions, busy int
	require.NoError(t, role.super.QueryRow(`SELECT count(*), count(*) FILTER (WHERE state <> 'idle')
		FROM pg_stat_activity WHERE usename = $1`, role.name).Scan(&sessions, &busy))
	assert.LessOrEqual(t, sessions, pool+listener, "sessions of the service with %d reads waiting", waiters)
	assert.Zero(t, busy, "sessions of the service in a transaction or a statement while %d reads wait", waiters)

	ended := s.SucceedOperation(t, op)
	wokenByTheEnd(t, s, waiters)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var slowest time.Duration
	for i, ch := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := answered(t, ch)
			assert.Equal(t, http.StatusOK, got.status, "read %d", i)
			assert.Equal(t, "succeeded", got.op.Status, "read %d", i)
			mu.Lock()
			slowest = max(slowest, got.at.Sub(ended))
			mu.Unlock()
		}()
	}
	wg.Wait()
	t.Logf("%d reads answered, the last %s after the end committed", waiters, slowest)
}

// The wait parameter is checked, 0 answers at once, and a workspace over
// its cap of waiting reads is answered 429 TOO_MANY_WAITERS with
// Retry-After while the same read without wait still answers.
func TestWaitIsValidatedAndCapped(t *testing.T) {
	cfg := apitest.Config("")
	cfg.WorkspaceOperationWaiters = 1
	s := apitest.Start(t, cfg, nil)
	op := s.PendingOperation(t)
	path := "/v1/operations/" + op.ID.String()

	for _, bad := range []string{"abc", "1m", "-1s", "1.5s", "1234567"} {
		r := s.Do(t, http.MethodGet, path+"?wait="+bad, nil, nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "wait=%s: %s", bad, r.Body)
		p := r.Problem(t)
		assert.Equal(t, "VALIDATION_FAILED", p.Code)
		assert.Equal(t, []string{"query.wait"}, p.Locations(), "wait=%s", bad)
	}
	r := s.Do(t, http.MethodGet, path+"?wait=0", nil, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

	first := waitFor(t, s, s.Token, op.ID)
	apitest.Eventually(t, hang, "the first read waiting", func() bool { return s.Waiters.Waiting() == 1 })
	r = s.Do(t, http.MethodGet, path+"?wait=500ms", nil, nil)
	require.Equal(t, http.StatusTooManyRequests, r.Status, "%s", r.Body)
	p := r.Problem(t)
	assert.Equal(t, "TOO_MANY_WAITERS", p.Code)
	assert.True(t, p.RetrySameKey)
	assert.NotEmpty(t, r.Header.Get("Retry-After"))
	require.Equal(t, http.StatusOK, s.Do(t, http.MethodGet, path, nil, nil).Status, "without wait")

	s.SucceedOperation(t, op)
	wokenByTheEnd(t, s, 1)
	got := answered(t, first)
	require.Equal(t, http.StatusOK, got.status)
	assert.Equal(t, "succeeded", got.op.Status)
}

// Six reads waiting for an operation's end, with the workspace's cap on
// concurrent work on (5, PostgreSQL's default) and no queueing (a request
// over the cap is refused at once, so a slot held by a wait shows as a
// 429): all six park, since a wait holds no slot, and meanwhile the
// workspace's other requests are served; the ends answer the six.
func TestSixParallelWaitsLeaveTheWorkspacesOtherRequestsServed(t *testing.T) {
	cfg := apitest.Config("")
	cfg.WorkspaceMaxConcurrency = "5"
	cfg.WorkspaceQueueTimeout = 0
	s := apitest.Start(t, cfg, nil)
	op := s.PendingOperation(t)
	path := "/v1/operations/" + op.ID.String()

	const waits = 6
	answers := make([]<-chan waitAnswer, 0, waits)
	for range waits {
		answers = append(answers, waitFor(t, s, s.Token, op.ID))
	}
	apitest.Eventually(t, hang, "six reads waiting", func() bool { return s.Waiters.Waiting() == waits })
	for range 10 {
		for _, p := range []string{path, "/v1/operations", "/v1/products"} {
			r := s.Do(t, http.MethodGet, p, nil, nil)
			require.Equal(t, http.StatusOK, r.Status, "GET %s while %d reads wait: %s", p, waits, r.Body)
		}
	}

	s.SucceedOperation(t, op)
	wokenByTheEnd(t, s, waits)
	for _, a := range answers {
		got := answered(t, a)
		require.Equal(t, http.StatusOK, got.status)
		assert.Equal(t, "succeeded", got.op.Status)
	}
}
