package idempotency_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/idempotency"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/mocks"
	"github.com/oncehq/once/ports"
)

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// idempotencyTx is a Tx whose one repository is the idempotency store
// under test: any other is the nil embedded Tx, and using it fails the test.
type idempotencyTx struct {
	ports.Tx
	store ports.IdempotencyStore
}

func (tx idempotencyTx) Idempotency() ports.IdempotencyStore { return tx.store }

// runAtOnce is a unit of work that runs fn at once with tx.
type runAtOnce struct{ tx ports.Tx }

func (u runAtOnce) Transact(ctx context.Context, _ uuid.UUID, fn func(context.Context, ports.Tx) error) error {
	return fn(ctx, u.tx)
}

// harness wires the service to the mocked idempotency store: the unit of
// work runs fn at once with a Tx holding it.
func harness(t *testing.T) (*idempotency.Service, *mocks.IdempotencyStore, *idempotency.Fingerprinter) {
	store := mocks.NewIdempotencyStore(t)
	uow := runAtOnce{tx: idempotencyTx{store: store}}
	fp, err := idempotency.NewFingerprinter([]idempotency.Secret{{ID: "k1", Key: []byte("0123456789abcdef0123456789abcdef")}})
	require.NoError(t, err)
	svc, err := idempotency.NewService(uow, fp, fixedClock{time.Unix(1_800_000_000, 0).UTC()}, idempotency.DefaultRetention)
	require.NoError(t, err)
	return svc, store, fp
}

func request(body string) idempotency.Request {
	return idempotency.Request{
		Scope: model.IdempotencyScope{WorkspaceID: uuid.New(), UserID: uuid.New(), Method: "POST", Path: "/v1/stores", Key: uuid.New()},
		Shape: idempotency.RequestShape{Method: "POST", Path: "/v1/stores", ContentType: "application/json", Body: []byte(body)},
	}
}

func TestReusedKeyNeverRunsWorkNorCompletes(t *testing.T) {
	svc, store, fp := harness(t)
	keyID, sum, err := fp.Fingerprint(request(`{"a":1}`).Shape)
	require.NoError(t, err)
	store.EXPECT().Claim(mock.Anything, mock.Anything).Return(&model.IdempotencyRecord{
		FingerprintKeyID: keyID, Fingerprint: sum, Status: model.IdempotencyCompleted,
		Response: model.SavedResponse{Status: 201, Body: []byte(`{}`)},
	}, nil).Once()
	// No Complete expectation: the mock fails the test if it is called.

	_, err = svc.Run(context.Background(), request(`{"a":2}`), func(context.Context, ports.Tx) (model.SavedResponse, error) {
		t.Fatal("work ran for a reused key")
		return model.SavedResponse{}, nil
	})
	assert.Equal(t, domain.CodeIdempotencyKeyReused, domain.ErrorCode(err))
}

func TestFreshRequestCompletesOnceWithAllowListedHeaders(t *testing.T) {
	svc, store, _ := harness(t)
	req := request(`{"a":1}`)
	store.EXPECT().Claim(mock.Anything, mock.MatchedBy(func(rec model.IdempotencyRecord) bool {
		return rec.Scope == req.Scope && rec.FingerprintKeyID == "k1" && rec.Status == model.IdempotencyInProgress &&
			rec.ExpiresAt.Sub(rec.CreatedAt) == idempotency.DefaultRetention
	})).Return(nil, nil).Once()
	store.EXPECT().Complete(mock.Anything, req.Scope, model.SavedResponse{
		Status:  201,
		Headers: map[string]string{"Location": "/v1/stores/1"},
		Body:    []byte(`{"id":"1"}`),
	}, mock.Anything).Return(nil).Once()

	ran := 0
	res, err := svc.Run(context.Background(), req, func(context.Context, ports.Tx) (model.SavedResponse, error) {
		ran++
		return model.SavedResponse{Status: 201, Body: []byte(`{"id":"1"}`),
			Headers: map[string]string{"location": "/v1/stores/1", "Set-Cookie": "session=abc"}}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 1, ran)
	assert.False(t, res.Replayed)
	assert.NotContains(t, res.Response.Headers, "Set-Cookie")
}

// TestResponseIsSavedAsBuilt: the service does not scan a response's text
// for secrets (the route that builds it leaves them out,
// adapters/httpapi/shown_once.go): names a tenant chose that read like a
// credential are saved, not refused with a 500.
func TestResponseIsSavedAsBuilt(t *testing.T) {
	svc, store, _ := harness(t)
	body := []byte(`{"filename":"Basic plan.png","name":"Bearer Bros shop","url":"https://example.com/?a=1&sig=x"}`)
	store.EXPECT().Claim(mock.Anything, mock.Anything).Return(nil, nil).Once()
	store.EXPECT().Complete(mock.Anything, mock.Anything, mock.MatchedBy(func(r model.SavedResponse) bool {
		return string(r.Body) == string(body)
	}), mock.Anything).Return(nil).Once()
	res, err := svc.Run(context.Background(), request(`{}`), func(context.Context, ports.Tx) (model.SavedResponse, error) {
		return model.SavedResponse{Status: 201, Body: body}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, string(body), string(res.Response.Body))
}

func TestInProgressTellsTheClientWhenToComeBack(t *testing.T) {
	svc, store, _ := harness(t)
	store.EXPECT().Claim(mock.Anything, mock.Anything).Return(nil, domain.Errorf(domain.CodeIdempotencyInProgress, "busy")).Once()
	_, err := svc.Run(context.Background(), request(`{}`), func(context.Context, ports.Tx) (model.SavedResponse, error) {
		t.Fatal("work ran while another request holds the key")
		return model.SavedResponse{}, nil
	})
	var de *domain.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, domain.CodeIdempotencyInProgress, de.Code)
	assert.Equal(t, idempotency.InProgressRetryAfter, de.RetryAfter)
}

func TestRetentionBelowADayIsRefused(t *testing.T) {
	_, err := idempotency.NewService(nil, nil, nil, 23*time.Hour)
	assert.Equal(t, domain.CodeValidation, domain.ErrorCode(err))
}

// A request's network check that fails now does not hide the response an
// earlier request with its key completed: the claim finds the record and
// replays it; on a fresh key the check's error is the request's, and
// nothing runs.
func TestAFailedCheckStillReplaysACompletedKey(t *testing.T) {
	svc, store, fp := harness(t)
	req := request(`{"a":1}`)
	down := domain.Errorf(domain.CodeUnavailable, "dns timeout")
	req.Check = func(context.Context) error { return down }
	keyID, sum, err := fp.Fingerprint(req.Shape)
	require.NoError(t, err)
	store.EXPECT().Claim(mock.Anything, mock.Anything).Return(&model.IdempotencyRecord{
		FingerprintKeyID: keyID, Fingerprint: sum, Status: model.IdempotencyCompleted,
		Response: model.SavedResponse{Status: 202, Body: []byte(`{}`)},
	}, nil).Once()
	noWork := func(context.Context, ports.Tx) (model.SavedResponse, error) {
		t.Fatal("work ran though its check failed")
		return model.SavedResponse{}, nil
	}
	result, err := svc.Run(context.Background(), req, noWork)
	require.NoError(t, err)
	assert.True(t, result.Replayed)
	assert.Equal(t, 202, result.Response.Status)

	fresh := request(`{"a":1}`)
	fresh.Check = req.Check
	store.EXPECT().Claim(mock.Anything, mock.Anything).Return(nil, nil).Once()
	_, err = svc.Run(context.Background(), fresh, noWork)
	assert.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err))
}
