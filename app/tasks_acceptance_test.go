package app_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
)

// writeTables are the tables a write may add rows to: the kinds' tables
// and the ones every write shares. Every idempotent endpoint is checked
// against all of them, so a second execution shows up wherever it writes.
func writeTables() []string {
	tables := []string{"operations", "outbox_events", "idempotency_requests", "products"}
	for _, k := range kinds.All {
		tables = append(tables, k.Table)
	}
	return tables
}

func rowCounts(t *testing.T, s *apitest.Server) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, table := range writeTables() {
		counts[table] = s.CountRows(t, table)
	}
	return counts
}

func delta(before, after map[string]int) map[string]int {
	d := map[string]int{}
	for table, n := range after {
		if n != before[table] {
			d[table] = n - before[table]
		}
	}
	return d
}

func pngBytes(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for x := range 40 {
		for y := range 30 {
			img.Set(x, y, color.RGBA{uint8(x * 6), uint8(y * 8), 120, 255})
		}
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	return buf.Bytes()
}

// verifiedStore connects a store and waits for the worker to verify it.
func verifiedStore(t *testing.T, s *apitest.Server) uuid.UUID {
	t.Helper()
	c := createStore(t, s, "shop-"+uuid.NewString()[:8])
	op := s.WaitOperation(t, c.Operation.ID, 20*time.Second)
	require.Equal(t, "succeeded", op.Status, op.Error)
	return c.Store.ID
}

func createProduct(t *testing.T, s *apitest.Server) uuid.UUID {
	t.Helper()
	r := s.Do(t, "POST", "/v1/products", map[string]any{"title": "Linen shirt", "description": "Blue", "price_minor": 2500, "currency": "USD"}, nil)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var p struct {
		ID uuid.UUID `json:"id"`
	}
	r.JSON(t, &p)
	return p.ID
}

// uploadedMedia registers and uploads a real PNG, ready to complete.
func uploadedMedia(t *testing.T, s *apitest.Server) uuid.UUID {
	t.Helper()
	data := pngBytes(t)
	r := s.Do(t, "POST", "/v1/media", map[string]any{"filename": "shirt.png", "content_type": "image/png", "size_bytes": len(data)},
		map[string]string{"Idempotency-Key": key()})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var reg struct {
		Media struct {
			ID uuid.UUID `json:"id"`
		} `json:"media"`
	}
	r.JSON(t, &reg)
	up := s.Do(t, "PUT", "/v1/media/"+reg.Media.ID.String()+"/content", data, map[string]string{"Content-Type": "image/png"})
	require.Equal(t, http.StatusOK, up.Status, string(up.Body))
	return reg.Media.ID
}

type idempotentCase struct {
	name   string
	method string
	status int
	// prepare makes what one logical request needs: its path, its body and
	// another body (a different request under the same key). Operations
	// without a body return nil bodies; their other request differs in a
	// header that changes meaning (If-Match).
	prepare func(t *testing.T, s *apitest.Server) (path string, body, other any)
	// adds is what one execution adds, per table.
	adds map[string]int
}

// idempotentCases are the cases of every kind of kinds.All, each from the
// kind's own test file (kindCases), in the order of the list.
func idempotentCases() []idempotentCase {
	var cases []idempotentCase
	for _, k := range kinds.All {
		cases = append(cases, kindCases[k.EventType].idempotent...)
	}
	return cases
}

// jobAdds is what one execution of a route that starts a job adds.
func jobAdds() map[string]int {
	return map[string]int{"operations": 1, "outbox_events": 1, "idempotency_requests": 1}
}

// jobAddsWith is jobAdds and the row of table the route creates.
func jobAddsWith(table string) map[string]int {
	m := jobAdds()
	m[table] = 1
	return m
}

// Every route that starts a declared kind's tasks has its case in
// idempotentCases (from the kind's own test file), so the list below
// follows kinds.All.
func TestEveryTaskKindStartIsAnIdempotentCase(t *testing.T) {
	names := map[string]bool{}
	for _, c := range idempotentCases() {
		names[c.name] = true
	}
	starts := httpapi.TaskStarts(httpapi.NewAPI(http.NewServeMux(), httpapi.Deps{}))
	for _, k := range kinds.All {
		require.NotEmpty(t, starts[k.EventType], "task kind %s has no start route", k.EventType)
		for _, op := range starts[k.EventType] {
			assert.True(t, names[op], "%s (starts %s) has no idempotent case in its kind's test file (kindCases)", op, k.EventType)
		}
	}
}

// For every idempotent endpoint, against PostgreSQL: a replay returns the
// original response and writes nothing; the same key with another request
// is refused; concurrent duplicates execute once.
func TestPostgresEveryIdempotentEndpoint(t *testing.T) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.Dispatcher, cfg.Worker = true, true // stores get verified, as publish and sync require
	s := apitest.Start(t, cfg, db)

	for _, c := range idempotentCases() {
		t.Run(c.name, func(t *testing.T) {
			path, body, other := c.prepare(t, s)
			k := key()
			before := rowCounts(t, s)
			first := s.Do(t, c.method, path, body, map[string]string{"Idempotency-Key": k})
			require.Equal(t, c.status, first.Status, string(first.Body))
			assert.Empty(t, first.Header.Get("Idempotent-Replayed"))
			afterFirst := rowCounts(t, s)
			assert.Equal(t, c.adds, delta(before, afterFirst), "rows one execution adds")

			replay := s.Do(t, c.method, path, body, map[string]string{"Idempotency-Key": k})
			require.Equal(t, c.status, replay.Status, string(replay.Body))
			assert.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
			assert.JSONEq(t, string(first.Body), string(replay.Body))
			assert.Equal(t, first.Header.Get("Location"), replay.Header.Get("Location"))

			otherHeaders := map[string]string{"Idempotency-Key": k}
			if other == nil {
				otherHeaders["If-Match"] = `"another-request"`
				other = body
			}
			reused := s.Do(t, c.method, path, other, otherHeaders)
			require.Equal(t, http.StatusConflict, reused.Status, string(reused.Body))
			assert.Equal(t, "IDEMPOTENCY_KEY_REUSED", reused.Problem(t).Code)
			assert.Empty(t, delta(afterFirst, rowCounts(t, s)), "a replay and a refused reuse write nothing")

			// Concurrent duplicates of a new request: one execution.
			path, body, _ = c.prepare(t, s)
			k = key()
			before = rowCounts(t, s)
			const n = 8
			responses := make([]apitest.Response, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					responses[i] = s.Do(t, c.method, path, body, map[string]string{"Idempotency-Key": k})
				}()
			}
			close(start)
			wg.Wait()
			fresh := 0
			for _, r := range responses {
				switch {
				case r.Status == c.status && r.Header.Get("Idempotent-Replayed") == "":
					fresh++
				case r.Status == c.status:
				case r.Status == http.StatusConflict && r.Problem(t).Code == "IDEMPOTENCY_REQUEST_IN_PROGRESS":
				default:
					t.Errorf("unexpected answer %d: %s", r.Status, r.Body)
				}
			}
			assert.Equal(t, 1, fresh, "exactly one execution")
			assert.Equal(t, c.adds, delta(before, rowCounts(t, s)), "rows of the one execution")
		})
	}
}

// Two sync requests for one store (different keys: two logical requests)
// at once: one sync, one 409 SYNC_ALREADY_ACTIVE naming it.
func TestPostgresOneActiveSyncPerStore(t *testing.T) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.Worker = true // verifies the store; no Dispatcher afterwards keeps the sync active
	cfg.Dispatcher = true
	s := apitest.Start(t, cfg, db)
	store := verifiedStore(t, s)
	s.Stop() // nothing may finish the sync behind the test's back

	s2 := apitest.Start(t, apitest.Config(db.AppDSN), db)
	actAs(s2, s)
	var wg sync.WaitGroup
	responses := make([]apitest.Response, 2)
	start := make(chan struct{})
	for i := range responses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			responses[i] = s2.Do(t, "POST", "/v1/stores/"+store.String()+"/syncs", nil, map[string]string{"Idempotency-Key": key()})
		}()
	}
	close(start)
	wg.Wait()

	var accepted, refused *apitest.Response
	for i := range responses {
		switch responses[i].Status {
		case http.StatusAccepted:
			accepted = &responses[i]
		case http.StatusConflict:
			refused = &responses[i]
		}
	}
	t.Logf("answers: %d %s / %d %s", responses[0].Status, responses[0].Body, responses[1].Status, responses[1].Body)
	require.NotNil(t, accepted, "one sync starts")
	require.NotNil(t, refused, "the other is refused")
	var started struct {
		Sync struct {
			ID uuid.UUID `json:"id"`
		} `json:"sync"`
	}
	accepted.JSON(t, &started)
	var problem struct {
		Code       string `json:"code"`
		ResourceID string `json:"resource_id"`
	}
	refused.JSON(t, &problem)
	assert.Equal(t, "SYNC_ALREADY_ACTIVE", problem.Code)
	assert.Equal(t, started.Sync.ID.String(), problem.ResourceID, "the refusal names the active sync")
	assert.Equal(t, 1, s2.CountRows(t, "catalog_syncs"))
}

// Drafts are not idempotent: concurrent edits are settled by If-Match.
func TestPostgresDraftsNeedTheCurrentRevision(t *testing.T) {
	s := apitest.Postgres(t)
	created := s.Do(t, "POST", "/v1/products", map[string]any{"title": "Mug", "price_minor": 900, "currency": "EUR"}, nil)
	require.Equal(t, http.StatusCreated, created.Status, string(created.Body))
	etag := created.Header.Get("ETag")
	require.Equal(t, `"1"`, etag)
	var p struct {
		ID uuid.UUID `json:"id"`
	}
	created.JSON(t, &p)
	path := "/v1/products/" + p.ID.String()
	edit := map[string]any{"title": "Mug, large", "price_minor": 1100, "currency": "EUR"}

	missing := s.Do(t, "PUT", path, edit, nil)
	require.Equal(t, http.StatusPreconditionRequired, missing.Status, string(missing.Body))
	assert.Equal(t, "PRECONDITION_REQUIRED", missing.Problem(t).Code)

	saved := s.Do(t, "PUT", path, edit, map[string]string{"If-Match": etag})
	require.Equal(t, http.StatusOK, saved.Status, string(saved.Body))
	assert.Equal(t, `"2"`, saved.Header.Get("ETag"))

	stale := s.Do(t, "PUT", path, map[string]any{"title": "Overwritten", "price_minor": 1, "currency": "EUR"}, map[string]string{"If-Match": etag})
	require.Equal(t, http.StatusPreconditionFailed, stale.Status, string(stale.Body))
	assert.Equal(t, "PRECONDITION_FAILED", stale.Problem(t).Code)

	got := s.Do(t, "GET", path, nil, nil)
	assert.Equal(t, `"2"`, got.Header.Get("ETag"))
	assert.Contains(t, string(got.Body), "Mug, large", "the stale save changed nothing")
}
