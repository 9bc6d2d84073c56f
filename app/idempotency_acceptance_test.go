package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/idempotency"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/apitest"
)

// The test credentials carry apitest.SecretMarker: every test server checks
// at its end that they appear in no log line and no database row.
var testAPIKey, testAPISecret = apitest.TestCredentials()

func storeBody(shop string) map[string]any {
	return map[string]any{
		"platform":         "shopify",
		"name":             "Acceptance shop",
		"external_shop_id": shop,
		"credentials":      map[string]any{"api_key": testAPIKey, "api_secret": testAPISecret},
	}
}

func key() string { return uuid.NewString() }

type storeCreated struct {
	Store struct {
		ID     uuid.UUID `json:"id"`
		Status string    `json:"status"`
	} `json:"store"`
	Operation struct {
		ID     uuid.UUID `json:"id"`
		Status string    `json:"status"`
	} `json:"operation"`
}

func TestPostgresReplayReturnsOriginalAndCreatesNothingNew(t *testing.T) {
	s := apitest.Postgres(t)
	k := key()
	first := s.Do(t, "POST", "/v1/stores", storeBody("shop-replay"), map[string]string{"Idempotency-Key": k})
	require.Equal(t, http.StatusCreated, first.Status, string(first.Body))
	assert.Empty(t, first.Header.Get("Idempotent-Replayed"))
	assert.NotContains(t, string(first.Body), testAPISecret, "credentials must never be echoed")

	// The quoted form of the same key is the same key.
	second := s.Do(t, "POST", "/v1/stores", storeBody("shop-replay"), map[string]string{"Idempotency-Key": `"` + k + `"`})
	require.Equal(t, http.StatusCreated, second.Status, string(second.Body))
	assert.Equal(t, "true", second.Header.Get("Idempotent-Replayed"))
	assert.JSONEq(t, string(first.Body), string(second.Body))
	assert.Equal(t, first.Header.Get("Location"), second.Header.Get("Location"))

	assert.Equal(t, 1, s.CountRows(t, "stores"))
	assert.Equal(t, 1, s.CountRows(t, "operations"))
	assert.Equal(t, 1, s.CountRows(t, "outbox_events"))
	assert.Equal(t, 1, s.CountRows(t, "idempotency_requests"))

	// What was written can be read back.
	var created storeCreated
	first.JSON(t, &created)
	got := s.Do(t, "GET", "/v1/stores/"+created.Store.ID.String(), nil, nil)
	require.Equal(t, http.StatusOK, got.Status, string(got.Body))
	assert.NotContains(t, string(got.Body), testAPISecret)
	op := s.Do(t, "GET", "/v1/operations/"+created.Operation.ID.String(), nil, nil)
	require.Equal(t, http.StatusOK, op.Status, string(op.Body))
	assert.Contains(t, string(op.Body), `"status":"pending"`)
}

func TestPostgresSameKeyOtherRequestIsRefused(t *testing.T) {
	s := apitest.Postgres(t)
	k := key()
	require.Equal(t, http.StatusCreated, s.Do(t, "POST", "/v1/stores", storeBody("shop-a"), map[string]string{"Idempotency-Key": k}).Status)

	other := s.Do(t, "POST", "/v1/stores", storeBody("shop-b"), map[string]string{"Idempotency-Key": k})
	require.Equal(t, http.StatusConflict, other.Status, string(other.Body))
	p := other.Problem(t)
	assert.Equal(t, "IDEMPOTENCY_KEY_REUSED", p.Code)
	assert.False(t, p.RetrySameKey)
	assert.Equal(t, "application/problem+json", other.Header.Get("Content-Type"))

	// A meaning-bearing header is part of the request too.
	ifMatch := s.Do(t, "POST", "/v1/stores", storeBody("shop-a"), map[string]string{"Idempotency-Key": k, "If-Match": `"3"`})
	assert.Equal(t, "IDEMPOTENCY_KEY_REUSED", ifMatch.Problem(t).Code)

	// Key order and whitespace do not make another request.
	reordered := `{ "credentials": {"api_secret":"` + testAPISecret + `", "api_key":"` + testAPIKey + `"},
		"external_shop_id":"shop-a", "name":"Acceptance shop", "platform":"shopify" }`
	again := s.Do(t, "POST", "/v1/stores", reordered, map[string]string{"Idempotency-Key": k})
	assert.Equal(t, http.StatusCreated, again.Status, string(again.Body))
	assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))

	assert.Equal(t, 1, s.CountRows(t, "stores"))
	assert.Equal(t, 1, s.CountRows(t, "outbox_events"))
}

// Fifty identical requests at once: one execution; every other answer is
// an immediate in-progress. The request that executes is held inside its
// transaction until all the others have answered, so they were answered
// while it was held: none waited on it (no clock involved), and none can
// be a replay. Then every retry gets the saved response.
func TestPostgresConcurrentDuplicatesExecuteOnce(t *testing.T) {
	const n = 50
	othersAnswered := make(chan struct{})
	var answered atomic.Int32
	var held atomic.Bool
	s := apitest.Postgres(t, apitest.WithBeforeAppend(func(ctx context.Context, _ []model.OutboxEvent) error {
		if held.Swap(true) {
			return errors.New("a second execution")
		}
		select {
		case <-othersAnswered:
			return nil
		case <-time.After(time.Minute): // only a failing run gets here
			return errors.New("the duplicates were not all answered while the first request was held")
		case <-ctx.Done():
			return ctx.Err()
		}
	}))
	k := key()
	var wg sync.WaitGroup
	responses := make([]apitest.Response, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			responses[i] = s.Do(t, "POST", "/v1/stores", storeBody("shop-concurrent"), map[string]string{"Idempotency-Key": k})
			if responses[i].Status != http.StatusCreated && answered.Add(1) == n-1 {
				close(othersAnswered)
			}
		})
	}
	close(start)
	wg.Wait()

	fresh, inProgress := 0, 0
	var original apitest.Response
	for _, r := range responses {
		switch r.Status {
		case http.StatusCreated:
			require.Empty(t, r.Header.Get("Idempotent-Replayed"), "a replay of a request that had not committed")
			original = r
			fresh++
		case http.StatusConflict:
			p := r.Problem(t)
			require.Equal(t, "IDEMPOTENCY_REQUEST_IN_PROGRESS", p.Code)
			assert.True(t, p.RetrySameKey)
			assert.Equal(t, "1", r.Header.Get("Retry-After"))
			inProgress++
		default:
			t.Fatalf("unexpected answer %d: %s", r.Status, r.Body)
		}
	}
	assert.Equal(t, 1, fresh)
	assert.Equal(t, n-1, inProgress)
	assert.Equal(t, 1, s.CountRows(t, "stores"))
	assert.Equal(t, 1, s.CountRows(t, "operations"))
	assert.Equal(t, 1, s.CountRows(t, "outbox_events"))

	// The retries the 409s asked for, all at once: each gets the saved
	// response.
	for i := range n {
		wg.Go(func() {
			responses[i] = s.Do(t, "POST", "/v1/stores", storeBody("shop-concurrent"), map[string]string{"Idempotency-Key": k})
		})
	}
	wg.Wait()
	for _, r := range responses {
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		assert.Equal(t, "true", r.Header.Get("Idempotent-Replayed"))
		assert.JSONEq(t, string(original.Body), string(r.Body))
	}
	assert.Equal(t, 1, s.CountRows(t, "stores"))
}

// Retries of finished requests always get the saved response, however many
// arrive at once: 200 completed keys, each replayed by 16 clients together.
// (When the replay took the scope's lock, 75-81 % of these answers were a
// false 409 IN_PROGRESS.)
func TestPostgresCompletedKeysReplayedAtConcurrency16(t *testing.T) {
	const keys, clients = 200, 16
	s := apitest.Postgres(t)
	type completed struct {
		key  string
		body map[string]any
		resp apitest.Response
	}
	done := make([]completed, keys)
	for i := range done {
		c := completed{key: key(), body: storeBody(fmt.Sprintf("shop-replay-%d", i))}
		c.resp = s.Do(t, "POST", "/v1/stores", c.body, map[string]string{"Idempotency-Key": c.key})
		require.Equal(t, http.StatusCreated, c.resp.Status, string(c.resp.Body))
		done[i] = c
	}

	var wrong atomic.Int32
	for _, c := range done {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range clients {
			wg.Go(func() {
				<-start
				r := s.Do(t, "POST", "/v1/stores", c.body, map[string]string{"Idempotency-Key": c.key})
				if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "true" || string(r.Body) != string(c.resp.Body) {
					if wrong.Add(1) <= 5 {
						t.Errorf("key %s: %d %s", c.key, r.Status, r.Body)
					}
				}
			})
		}
		close(start)
		wg.Wait()
	}
	assert.Zero(t, wrong.Load(), "answers other than the saved response, of %d", keys*clients)
	assert.Equal(t, keys, s.CountRows(t, "stores"))
	assert.Equal(t, keys, s.CountRows(t, "outbox_events"))
}

// The proof that a duplicate does not wait on the first request's lock: the
// first transaction is held open inside the business work, and every
// duplicate must be answered while it is still open.
func TestPostgresInProgressIsAnsweredWithoutWaiting(t *testing.T) {
	hold := make(chan struct{})
	entered := make(chan struct{}, 1)
	s := apitest.Postgres(t, apitest.WithBeforeAppend(func(ctx context.Context, _ []model.OutboxEvent) error {
		select {
		case entered <- struct{}{}:
		default:
		}
		select {
		case <-hold:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}))
	k := key()
	firstDone := make(chan apitest.Response, 1)
	go func() {
		firstDone <- s.Do(t, "POST", "/v1/stores", storeBody("shop-held"), map[string]string{"Idempotency-Key": k})
	}()
	<-entered // the first request holds its claim inside the transaction

	var wg sync.WaitGroup
	var answered atomic.Int32
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.Do(t, "POST", "/v1/stores", storeBody("shop-held"), map[string]string{"Idempotency-Key": k})
			if assert.Equal(t, http.StatusConflict, r.Status, string(r.Body)) {
				assert.Equal(t, "IDEMPOTENCY_REQUEST_IN_PROGRESS", r.Problem(t).Code)
				assert.NotEmpty(t, r.Header.Get("Retry-After"))
				answered.Add(1)
			}
		}()
	}
	wg.Wait() // returns only if no duplicate waited for the held transaction
	assert.Equal(t, int32(10), answered.Load())
	select {
	case <-firstDone:
		t.Fatal("the first request finished before it was released")
	default:
	}
	close(hold)
	first := <-firstDone
	require.Equal(t, http.StatusCreated, first.Status, string(first.Body))
	assert.Equal(t, 1, s.CountRows(t, "stores"))
}

func TestPostgresFailedTransactionLeavesNoRecordAndRetrySucceeds(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	s := apitest.Postgres(t, apitest.WithBeforeAppend(func(context.Context, []model.OutboxEvent) error {
		if fail.Load() {
			return domain.Wrap(domain.CodeUnavailable, errors.New("injected: connection lost"), "the database is unavailable")
		}
		return nil
	}))
	k := key()
	failed := s.Do(t, "POST", "/v1/stores", storeBody("shop-fail"), map[string]string{"Idempotency-Key": k})
	require.Equal(t, http.StatusServiceUnavailable, failed.Status, string(failed.Body))
	assert.True(t, failed.Problem(t).RetrySameKey)
	assert.Equal(t, 0, s.CountRows(t, "idempotency_requests"))
	assert.Equal(t, 0, s.CountRows(t, "stores"))
	assert.Equal(t, 0, s.CountRows(t, "operations"))

	fail.Store(false)
	retry := s.Do(t, "POST", "/v1/stores", storeBody("shop-fail"), map[string]string{"Idempotency-Key": k})
	require.Equal(t, http.StatusCreated, retry.Status, string(retry.Body))
	assert.Empty(t, retry.Header.Get("Idempotent-Replayed"), "the retry executes: nothing was saved before")
	assert.Equal(t, 1, s.CountRows(t, "idempotency_requests"))
	assert.Equal(t, 1, s.CountRows(t, "stores"))
	assert.Equal(t, 1, s.CountRows(t, "outbox_events"))
}

type movedClock struct{ offset time.Duration }

func (c movedClock) Now() time.Time { return time.Now().UTC().Add(c.offset) }

func TestPostgresCleanupRemovesExpiredRecordsInBatches(t *testing.T) {
	var uow ports.UnitOfWork
	var discovery ports.IdempotencyDiscovery
	s := apitest.Postgres(t, fx.Populate(&uow, &discovery))
	const n = 25
	for i := range n {
		r := s.Do(t, "POST", "/v1/stores", storeBody(fmt.Sprintf("shop-%d", i)), map[string]string{"Idempotency-Key": key()})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	}
	require.Equal(t, n, s.CountRows(t, "idempotency_requests"))

	// Not yet expired: nothing goes.
	deleted, err := idempotency.NewCleaner(discovery, uow, movedClock{47 * time.Hour}, 10).RunOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 0, deleted)

	// Past the 48 h retention: all go, ten at a time.
	deleted, err = idempotency.NewCleaner(discovery, uow, movedClock{49 * time.Hour}, 10).RunOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, n, deleted)
	assert.Equal(t, 0, s.CountRows(t, "idempotency_requests"))
	assert.Equal(t, n, s.CountRows(t, "stores"), "cleanup touches idempotency records only")
}

func TestIdempotencyKeyRules(t *testing.T) {
	for name, start := range map[string]func(testing.TB, ...fx.Option) *apitest.Server{"memory": apitest.Memory, "postgres": apitest.Postgres} {
		t.Run(name, func(t *testing.T) {
			s := start(t)
			missing := s.Do(t, "POST", "/v1/stores", storeBody("k"), nil)
			require.Equal(t, http.StatusBadRequest, missing.Status, string(missing.Body))
			assert.Equal(t, "IDEMPOTENCY_KEY_MISSING", missing.Problem(t).Code)

			invalid := s.Do(t, "POST", "/v1/stores", storeBody("k"), map[string]string{"Idempotency-Key": "not-a-uuid"})
			require.Equal(t, http.StatusBadRequest, invalid.Status)
			assert.Equal(t, "IDEMPOTENCY_KEY_INVALID", invalid.Problem(t).Code)
			assert.False(t, invalid.Problem(t).RetrySameKey)

			big := storeBody("k")
			big["name"] = strings.Repeat("x", 300<<10)
			tooLarge := s.Do(t, "POST", "/v1/stores", big, map[string]string{"Idempotency-Key": key()})
			require.Equal(t, http.StatusRequestEntityTooLarge, tooLarge.Status)
			assert.Equal(t, "REQUEST_BODY_TOO_LARGE", tooLarge.Problem(t).Code)

			bad := storeBody("k")
			bad["platform"] = "myspace"
			invalidBody := s.Do(t, "POST", "/v1/stores", bad, map[string]string{"Idempotency-Key": key()})
			require.Equal(t, http.StatusUnprocessableEntity, invalidBody.Status)
			assert.Equal(t, "VALIDATION_FAILED", invalidBody.Problem(t).Code)

			if s.PG != nil {
				assert.Equal(t, 0, s.CountRows(t, "idempotency_requests"), "rejected requests store nothing")
				assert.Equal(t, 0, s.CountRows(t, "stores"))
			}
		})
	}
}

func TestAuthentication(t *testing.T) {
	for name, start := range map[string]func(testing.TB, ...fx.Option) *apitest.Server{"memory": apitest.Memory, "postgres": apitest.Postgres} {
		t.Run(name, func(t *testing.T) {
			s := start(t)
			noToken := s.Do(t, "GET", "/v1/stores/"+uuid.NewString(), nil, map[string]string{"Authorization": ""})
			require.Equal(t, http.StatusUnauthorized, noToken.Status)
			assert.Equal(t, "UNAUTHENTICATED", noToken.Problem(t).Code)
			assert.NotEmpty(t, noToken.Header.Get("WWW-Authenticate"))

			garbage := s.Do(t, "GET", "/v1/stores/"+uuid.NewString(), nil, map[string]string{"Authorization": "Bearer nope"})
			require.Equal(t, http.StatusUnauthorized, garbage.Status)

			stranger := s.TokenFor(t, s.Workspace, uuid.New())
			forbidden := s.Do(t, "GET", "/v1/stores/"+uuid.NewString(), nil, map[string]string{"Authorization": "Bearer " + stranger})
			require.Equal(t, http.StatusForbidden, forbidden.Status)
			assert.Equal(t, "FORBIDDEN", forbidden.Problem(t).Code)

			// Another workspace's store is not found, not forbidden.
			created := s.Do(t, "POST", "/v1/stores", storeBody("mine"), map[string]string{"Idempotency-Key": key()})
			require.Equal(t, http.StatusCreated, created.Status, string(created.Body))
			var c storeCreated
			created.JSON(t, &c)
			otherWS, otherUser := uuid.New(), uuid.New()
			_, err := s.WS.Create(context.Background(), otherWS, "other", otherUser)
			require.NoError(t, err)
			other := s.Do(t, "GET", "/v1/stores/"+c.Store.ID.String(), nil, map[string]string{"Authorization": "Bearer " + s.TokenFor(t, otherWS, otherUser)})
			require.Equal(t, http.StatusNotFound, other.Status)
			assert.Equal(t, "NOT_FOUND", other.Problem(t).Code)
		})
	}
}

func TestDuplicateShopIsAConflict(t *testing.T) {
	s := apitest.Postgres(t)
	require.Equal(t, http.StatusCreated, s.Do(t, "POST", "/v1/stores", storeBody("dup"), map[string]string{"Idempotency-Key": key()}).Status)
	again := s.Do(t, "POST", "/v1/stores", storeBody("dup"), map[string]string{"Idempotency-Key": key()})
	require.Equal(t, http.StatusConflict, again.Status)
	assert.Equal(t, "STORE_ALREADY_EXISTS", again.Problem(t).Code)
	assert.Equal(t, 1, s.CountRows(t, "stores"))
	assert.Equal(t, 1, s.CountRows(t, "idempotency_requests"), "the refused request rolled back its record")
}

func TestLogsCarryNoKeysOrSecrets(t *testing.T) {
	s := apitest.Memory(t)
	k := key()
	require.Equal(t, http.StatusCreated, s.Do(t, "POST", "/v1/stores", storeBody("logs"), map[string]string{"Idempotency-Key": k}).Status)
	logs := s.Logs.String()
	require.Contains(t, logs, "idempotency_key_hash", "the request was logged")
	assert.NotContains(t, logs, k, "keys appear in logs only hashed")
	assert.NotContains(t, logs, testAPISecret)
	assert.NotContains(t, logs, s.Token)
	var line map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.SplitN(logs, "\n", 2)[0]), &line), "logs are JSON lines")
}
