package secrets_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/aesgcm"
	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/fetchpolicy"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/secrets"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/domain/webhooks"
	"github.com/oncehq/once/domain/webhooks/delivery"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/testkit"
)

// Two AES-256 keys: a, the old one, and b, the new one.
const (
	keyA = "a:YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE="
	keyB = "b:YmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmI="
)

func sealer(t *testing.T, spec string) *aesgcm.Sealer {
	t.Helper()
	keys, err := aesgcm.ParseKeys(spec)
	require.NoError(t, err)
	s, err := aesgcm.NewSealer(keys)
	require.NoError(t, err)
	return s
}

// world is a database holding, in two workspaces, stores and webhook
// endpoints (one of them rotated, so it has a previous secret) sealed
// under key a, and a receiver the endpoints deliver to.
type world struct {
	uow        ports.UnitOfWork
	workspaces ports.SealedSecretWorkspaces
	clock      *testkit.ManualClock
	receiver   *receiver
	creds      map[uuid.UUID]model.StoreCredentials
	// secrets are each endpoint's current secret, then its previous one.
	secrets map[uuid.UUID][]string
	owner   map[uuid.UUID]uuid.UUID
}

const (
	storesPerWorkspace    = 3
	endpointsPerWorkspace = 2
)

func newWorld(t *testing.T) *world {
	t.Helper()
	db := pgtest.New(t)
	w := &world{
		uow: postgres.NewUnitOfWork(db.App), workspaces: postgres.NewSealedSecretWorkspaces(db.App),
		clock: testkit.NewManualClockAt(time.Now().UTC()), receiver: newReceiver(t),
		creds: map[uuid.UUID]model.StoreCredentials{}, secrets: map[uuid.UUID][]string{}, owner: map[uuid.UUID]uuid.UUID{},
	}
	a := sealer(t, keyA)
	svc := w.endpoints(t, a)
	ids := system.NewIDs()
	for range 2 {
		ws := uuid.New()
		require.NoError(t, w.uow.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
			if err := tx.Workspaces().Create(ctx, model.Workspace{ID: ws, Name: "w", CreatedAt: w.clock.Now()}); err != nil {
				return err
			}
			for i := range storesPerWorkspace {
				s := model.Store{ID: ids.NewID(), WorkspaceID: ws, Platform: "shopify", Name: "s", ExternalShopID: uuid.NewString(),
					Status: model.StorePendingVerification, CredentialVersion: i + 1, CreatedAt: w.clock.Now(), UpdatedAt: w.clock.Now()}
				creds := model.StoreCredentials{APIKey: "key-" + s.ID.String(), APISecret: "secret-" + s.ID.String()}
				var err error
				if s.SealedCredentials, err = stores.SealCredentials(a, s, creds); err != nil {
					return err
				}
				w.creds[s.ID], w.owner[s.ID] = creds, ws
				if err := tx.Stores().Create(ctx, s); err != nil {
					return err
				}
			}
			return nil
		}))
		admin := model.Principal{WorkspaceID: ws, UserID: uuid.New(), Role: model.RoleAdmin}
		for i := range endpointsPerWorkspace {
			created, err := ports.Query(t.Context(), w.uow, ws, func(ctx context.Context, tx ports.Tx) (webhooks.WithSecret, error) {
				return svc.Create(ctx, tx, admin, webhooks.CreateCommand{URL: w.receiver.url + "/" + uuid.NewString(),
					EventTypes: []string{model.WebhookOperationSucceeded}, Enabled: true})
			})
			require.NoError(t, err)
			id := created.Endpoint.ID
			w.secrets[id], w.owner[id] = []string{created.Secret}, ws
			if i == 0 {
				rotated, err := ports.Query(t.Context(), w.uow, ws, func(ctx context.Context, tx ports.Tx) (webhooks.WithSecret, error) {
					return svc.RotateSecret(ctx, tx, admin, id)
				})
				require.NoError(t, err)
				w.secrets[id] = []string{rotated.Secret, created.Secret}
			}
		}
	}
	return w
}

func (w *world) endpoints(t *testing.T, s *aesgcm.Sealer) *webhooks.Service {
	t.Helper()
	policy, err := fetchpolicy.Parse("127.0.0.0/8", "")
	require.NoError(t, err)
	return webhooks.NewService(w.uow, s, w.clock, system.NewIDs(), policy, testkit.NewResolver(), webhooks.Limits{MaxEndpoints: 10})
}

func (w *world) reseal(t *testing.T, keyring string, pass secrets.Pass) (secrets.Report, error) {
	t.Helper()
	s := sealer(t, keyring)
	return secrets.NewResealer(w.uow, w.workspaces, s, s).Run(t.Context(), pass)
}

// keysInUse counts the stored ciphertexts by the key that sealed them.
func (w *world) keysInUse(t *testing.T) map[string]int {
	t.Helper()
	s := sealer(t, keyB+","+keyA)
	n := map[string]int{}
	count := func(ciphertext []byte) {
		id, _, err := s.KeyOf(ciphertext)
		require.NoError(t, err)
		n[id]++
	}
	for id, ws := range w.owner {
		require.NoError(t, w.uow.Transact(t.Context(), ws, func(ctx context.Context, tx ports.Tx) error {
			if _, ok := w.creds[id]; ok {
				s, err := tx.Stores().Get(ctx, id)
				count(s.SealedCredentials)
				return err
			}
			e, err := ports.Repository[ports.WebhookEndpointRepository](tx).Get(ctx, id)
			count(e.SealedSecret)
			if e.SealedPreviousSecret != nil {
				count(e.SealedPreviousSecret)
			}
			return err
		}))
	}
	return n
}

// requireEverySecretOpens opens every store's credentials with keyring,
// as a job about to call the platform does, and delivers to every
// endpoint with it, as a worker does: each delivery's signature verifies
// with the endpoint's current secret and with its previous one.
func (w *world) requireEverySecretOpens(t *testing.T, keyring string) {
	t.Helper()
	s := sealer(t, keyring)
	handler := delivery.NewHandler(w.uow, w.endpoints(t, s), &http.Client{Timeout: 10 * time.Second}, w.clock, nil)
	for id, ws := range w.owner {
		if want, ok := w.creds[id]; ok {
			store, err := ports.Query(t.Context(), w.uow, ws, func(ctx context.Context, tx ports.Tx) (model.Store, error) {
				return tx.Stores().Get(ctx, id)
			})
			require.NoError(t, err)
			got, err := stores.OpenCredentials(s, store)
			require.NoError(t, err, "store %s", id)
			require.Equal(t, want, got)
			continue
		}
		d := testkit.PendingDelivery(t, w.uow, ws, id, w.clock.Now(), w.clock.Now())
		require.NoError(t, handler.Handle(t.Context(), ports.MessageOf(d)), "endpoint %s", id)
		got := w.receiver.take(t, d.ID.String())
		for _, secret := range w.secrets[id] {
			wh, err := standardwebhooks.NewWebhook(secret)
			require.NoError(t, err)
			require.NoError(t, wh.Verify(got.body, got.header), "endpoint %s", id)
		}
		require.Len(t, strings.Fields(got.header.Get(webhooks.HeaderSignature)), len(w.secrets[id]))
	}
}

// Secrets sealed under key a; the keyring becomes b,a and the re-seal
// runs; the keyring becomes b alone: every store's credentials and every
// endpoint's secrets still open.
func TestAfterTheResealTheOldKeyCanBeRemoved(t *testing.T) {
	w := newWorld(t)
	storeCount, secretCount := 2*storesPerWorkspace, 2*(endpointsPerWorkspace+1)
	require.Equal(t, map[string]int{"a": storeCount + secretCount}, w.keysInUse(t))

	report, err := w.reseal(t, keyB+","+keyA, secrets.Pass{Batch: 2})
	require.NoError(t, err)
	require.Equal(t, "b", report.SealingKey)
	require.Equal(t, map[secrets.Kind]int{secrets.StoreCredentials: storeCount, secrets.WebhookSecrets: secretCount}, report.Resealed)
	require.False(t, report.Stopped)
	require.Equal(t, map[string]int{"b": storeCount + secretCount}, w.keysInUse(t))

	w.requireEverySecretOpens(t, keyB)
}

// A second run finds everything under the sealing key and re-seals
// nothing.
func TestASecondResealIsANoop(t *testing.T) {
	w := newWorld(t)
	_, err := w.reseal(t, keyB+","+keyA, secrets.Pass{Batch: 100})
	require.NoError(t, err)
	report, err := w.reseal(t, keyB+","+keyA, secrets.Pass{Batch: 100})
	require.NoError(t, err)
	require.Equal(t, map[secrets.Kind]int{}, zeroless(report.Resealed))
	require.Equal(t, map[secrets.Kind]int{secrets.StoreCredentials: 2 * storesPerWorkspace, secrets.WebhookSecrets: 2 * (endpointsPerWorkspace + 1)}, report.Current)
	w.requireEverySecretOpens(t, keyB)
}

// A run stopped after one batch (as a run killed between two batches)
// keeps what it committed, leaves the rest under the old key, where the
// keyring still opens it; the next run re-seals the rest.
func TestAResealStoppedAfterOneBatchGoesOnAtTheNextRun(t *testing.T) {
	w := newWorld(t)
	first, err := w.reseal(t, keyB+","+keyA, secrets.Pass{Batch: 2, MaxBatches: 1})
	require.NoError(t, err)
	require.True(t, first.Stopped)
	require.Equal(t, map[secrets.Kind]int{secrets.StoreCredentials: 2}, zeroless(first.Resealed), "one batch: two stores")
	total := 2*storesPerWorkspace + 2*(endpointsPerWorkspace+1)
	require.Equal(t, map[string]int{"b": 2, "a": total - 2}, w.keysInUse(t))
	w.requireEverySecretOpens(t, keyB+","+keyA)

	second, err := w.reseal(t, keyB+","+keyA, secrets.Pass{Batch: 2})
	require.NoError(t, err)
	require.False(t, second.Stopped)
	require.Equal(t, total-2, second.Resealed[secrets.StoreCredentials]+second.Resealed[secrets.WebhookSecrets])
	require.Equal(t, map[string]int{"b": total}, w.keysInUse(t))
	w.requireEverySecretOpens(t, keyB)
}

// A secret sealed under a key the keyring does not hold stops the run
// before anything is re-sealed, and the refusal names its row.
func TestAResealRefusesSecretsUnderAKeyNotInTheKeyring(t *testing.T) {
	w := newWorld(t)
	_, err := w.reseal(t, keyB, secrets.Pass{Batch: 2})
	require.True(t, domain.IsCode(err, domain.CodeInvalidState), "%v", err)
	for id := range w.owner {
		require.Contains(t, err.Error(), id.String())
	}
	require.Contains(t, err.Error(), `key "a"`)
	require.Equal(t, map[string]int{"a": 2*storesPerWorkspace + 2*(endpointsPerWorkspace+1)}, w.keysInUse(t), "nothing re-sealed")
}

func zeroless(m map[secrets.Kind]int) map[secrets.Kind]int {
	out := map[secrets.Kind]int{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// receiver keeps every request it is sent, by webhook-id.
type receiver struct {
	url string
	mu  sync.Mutex
	got map[string]request
}

type request struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{got: map[string]request{}}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got[req.Header.Get(webhooks.HeaderID)] = request{header: req.Header.Clone(), body: body}
		r.mu.Unlock()
		rw.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// take is the request of webhook-id id, which Handle has sent by the time
// it returns.
func (r *receiver) take(t *testing.T, id string) request {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	got, ok := r.got[id]
	require.True(t, ok, "no request with webhook-id %s", id)
	return got
}
