package webhooks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/fetchpolicy"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/webhooks"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
	"github.com/oncehq/once/testsupport/webhooktest"
)

type harness struct {
	svc    *webhooks.Service
	uow    ports.UnitOfWork
	clock  *testkit.ManualClock
	admin  model.Principal
	member model.Principal
}

func newHarness(t *testing.T) harness { return newHarnessWith(t, webhooks.Limits{MaxEndpoints: 100}) }

func newHarnessWith(t *testing.T, limits webhooks.Limits) harness {
	t.Helper()
	clock := testkit.NewManualClock()
	policy, err := fetchpolicy.Parse("", "")
	require.NoError(t, err)
	dns := testkit.NewResolver()
	dns.Set("hooks.example.com", "93.184.215.14")
	dns.Set("internal.example.com", "10.0.0.7")
	e := webhooktest.NewEndpoints(t, clock, policy, dns, limits)
	return harness{
		svc: e.Service, uow: e.UoW, clock: clock, admin: e.Admin,
		member: model.Principal{WorkspaceID: e.Admin.WorkspaceID, UserID: uuid.New(), Role: model.RoleMember},
	}
}

// createAs creates an endpoint as an API request does: the URL checked
// first, then the endpoint written in a transaction.
func (h harness) createAs(ctx context.Context, p model.Principal, cmd webhooks.CreateCommand) (webhooks.WithSecret, error) {
	if err := h.svc.CheckURL(ctx, p, cmd.URL); err != nil {
		return webhooks.WithSecret{}, err
	}
	return ports.Query(ctx, h.uow, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) (webhooks.WithSecret, error) {
		return h.svc.Create(ctx, tx, p, cmd)
	})
}

func (h harness) rotate(ctx context.Context, p model.Principal, id uuid.UUID) (webhooks.WithSecret, error) {
	return ports.Query(ctx, h.uow, p.WorkspaceID, func(ctx context.Context, tx ports.Tx) (webhooks.WithSecret, error) {
		return h.svc.RotateSecret(ctx, tx, p, id)
	})
}

func (h harness) create(t *testing.T) webhooks.WithSecret {
	t.Helper()
	created, err := h.createAs(t.Context(), h.admin, webhooks.CreateCommand{
		URL: "https://hooks.example.com/once/" + uuid.NewString(), EventTypes: []string{model.WebhookOperationSucceeded}, Enabled: true,
	})
	require.NoError(t, err)
	return created
}

func TestCreateSealsANewStandardSecretShownOnce(t *testing.T) {
	h := newHarness(t)
	created := h.create(t)
	require.True(t, strings.HasPrefix(created.Secret, "whsec_"), created.Secret)
	_, err := standardwebhooks.NewWebhook(created.Secret)
	require.NoError(t, err)
	require.NotContains(t, string(created.Endpoint.SealedSecret), strings.TrimPrefix(created.Secret, "whsec_"))

	got, err := h.svc.Get(t.Context(), h.admin, created.Endpoint.ID)
	require.NoError(t, err)
	secrets, err := h.svc.SigningSecrets(got, h.clock.Now())
	require.NoError(t, err)
	require.Equal(t, []string{created.Secret}, secrets)

	other := h.create(t)
	require.NotEqual(t, created.Secret, other.Secret)
}

func TestOnlyAdminsManageEndpoints(t *testing.T) {
	h := newHarness(t)
	created := h.create(t)
	ctx := t.Context()
	_, err := h.createAs(ctx, h.member, webhooks.CreateCommand{URL: "https://hooks.example.com/x", EventTypes: []string{model.WebhookOperationFailed}})
	require.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
	_, err = h.svc.Get(ctx, h.member, created.Endpoint.ID)
	require.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
	_, err = h.svc.List(ctx, h.member, ports.ListQuery{Limit: 10})
	require.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
	enabled := false
	_, err = h.svc.Update(ctx, h.member, created.Endpoint.ID, webhooks.Patch{Enabled: &enabled})
	require.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
	_, err = h.rotate(ctx, h.member, created.Endpoint.ID)
	require.Equal(t, domain.CodeForbidden, domain.ErrorCode(err))
	require.Equal(t, domain.CodeForbidden, domain.ErrorCode(h.svc.Delete(ctx, h.member, created.Endpoint.ID)))
}

func TestURLsAreCheckedByTheFetchPolicy(t *testing.T) {
	h := newHarness(t)
	for _, url := range []string{
		"ftp://hooks.example.com/x",
		"https://user:pw@hooks.example.com/x",
		"http://127.0.0.1/x",
		"http://localhost:8080/x",
		"http://169.254.169.254/latest/meta-data",
		"http://[::1]/x",
		"https://internal.example.com/x", // resolves to a private address
		"https://hooks.example.com/" + strings.Repeat("a", webhooks.MaxURLLength),
	} {
		_, err := h.createAs(t.Context(), h.admin, webhooks.CreateCommand{URL: url, EventTypes: []string{model.WebhookOperationFailed}})
		var e *domain.Error
		require.ErrorAs(t, err, &e, url)
		require.Equal(t, domain.CodeValidation, e.Code, url)
		require.Equal(t, "url", e.Field, url)
		require.NotContains(t, e.Message, url, "the URL is never repeated")
	}
	// The form is checked again in the transaction, whoever forgot to
	// call CheckURL.
	_, err := ports.Query(t.Context(), h.uow, h.admin.WorkspaceID, func(ctx context.Context, tx ports.Tx) (webhooks.WithSecret, error) {
		return h.svc.Create(ctx, tx, h.admin, webhooks.CreateCommand{URL: "http://10.1.2.3/hook", EventTypes: []string{model.WebhookOperationFailed}})
	})
	require.Equal(t, domain.CodeValidation, domain.ErrorCode(err))
	created := h.create(t)
	bad := "http://10.1.2.3/hook"
	_, err = h.svc.Update(t.Context(), h.admin, created.Endpoint.ID, webhooks.Patch{URL: &bad})
	require.Equal(t, domain.CodeValidation, domain.ErrorCode(err))
}

func TestEventTypesMustBeKnown(t *testing.T) {
	h := newHarness(t)
	for _, events := range [][]string{nil, {"operation.exploded"}} {
		_, err := h.createAs(t.Context(), h.admin, webhooks.CreateCommand{URL: "https://hooks.example.com/x", EventTypes: events})
		require.Equal(t, domain.CodeValidation, domain.ErrorCode(err), events)
	}
	created, err := h.createAs(t.Context(), h.admin, webhooks.CreateCommand{URL: "https://hooks.example.com/x",
		EventTypes: []string{model.WebhookDeadLetterCreated, model.WebhookOperationFailed, model.WebhookDeadLetterCreated}})
	require.NoError(t, err)
	require.Equal(t, []string{model.WebhookDeadLetterCreated, model.WebhookOperationFailed}, created.Endpoint.EventTypes)
}

func TestUpdateChangesWhatThePatchSets(t *testing.T) {
	h := newHarness(t)
	created := h.create(t)
	h.clock.Advance(time.Minute)
	enabled, events := false, []string{model.WebhookOperationCancelled}
	updated, err := h.svc.Update(t.Context(), h.admin, created.Endpoint.ID, webhooks.Patch{Enabled: &enabled, EventTypes: &events})
	require.NoError(t, err)
	require.False(t, updated.Enabled)
	require.Equal(t, events, updated.EventTypes)
	require.Equal(t, created.Endpoint.URL, updated.URL)
	require.Equal(t, h.clock.Now(), updated.UpdatedAt)
	got, err := h.svc.Get(t.Context(), h.admin, created.Endpoint.ID)
	require.NoError(t, err)
	require.Equal(t, updated.EventTypes, got.EventTypes)
	require.False(t, got.Enabled)

	_, err = h.svc.Update(t.Context(), h.admin, uuid.New(), webhooks.Patch{Enabled: &enabled})
	require.Equal(t, domain.CodeNotFound, domain.ErrorCode(err))
}

func TestRotationKeepsThePreviousSecretForTheOverlap(t *testing.T) {
	h := newHarness(t)
	created := h.create(t)
	rotated, err := h.rotate(t.Context(), h.admin, created.Endpoint.ID)
	require.NoError(t, err)
	require.NotEqual(t, created.Secret, rotated.Secret)

	secretsAt := func(at time.Time) []string {
		e, err := h.svc.Get(t.Context(), h.admin, created.Endpoint.ID)
		require.NoError(t, err)
		s, err := h.svc.SigningSecrets(e, at)
		require.NoError(t, err)
		return s
	}
	now := h.clock.Now()
	require.Equal(t, []string{rotated.Secret, created.Secret}, secretsAt(now))
	require.Equal(t, []string{rotated.Secret, created.Secret}, secretsAt(now.Add(webhooks.SecretOverlap-time.Second)))
	require.Equal(t, []string{rotated.Secret}, secretsAt(now.Add(webhooks.SecretOverlap)))

	// A second rotation drops the first secret at once.
	again, err := h.rotate(t.Context(), h.admin, created.Endpoint.ID)
	require.NoError(t, err)
	require.Equal(t, []string{again.Secret, rotated.Secret}, secretsAt(now))
}

func TestASealedSecretOpensOnlyOnItsOwnEndpoint(t *testing.T) {
	h := newHarness(t)
	a, b := h.create(t), h.create(t)
	moved := b.Endpoint
	moved.SealedSecret = a.Endpoint.SealedSecret
	_, err := h.svc.SigningSecrets(moved, h.clock.Now())
	require.Equal(t, domain.CodeInternal, domain.ErrorCode(err))
}

func TestDeleteAndList(t *testing.T) {
	h := newHarness(t)
	first, second := h.create(t), h.create(t)
	page, err := h.svc.List(t.Context(), h.admin, ports.ListQuery{Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Items, 2)
	require.NoError(t, h.svc.Delete(t.Context(), h.admin, first.Endpoint.ID))
	require.Equal(t, domain.CodeNotFound, domain.ErrorCode(h.svc.Delete(t.Context(), h.admin, first.Endpoint.ID)))
	page, err = h.svc.List(t.Context(), h.admin, ports.ListQuery{Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	require.Equal(t, second.Endpoint.ID, page.Items[0].ID)
}

// TestAWorkspaceHasAtMostItsCapOfEndpointsEachURLOnce: with the cap at
// 1,000, the 1,001st endpoint is refused (LIMIT_REACHED) and nothing is
// written; a URL another endpoint has is refused on create and on a
// change of URL (WEBHOOK_ENDPOINT_EXISTS, naming that endpoint), while
// an endpoint keeps its own URL in a patch; a delete makes room.
func TestAWorkspaceHasAtMostItsCapOfEndpointsEachURLOnce(t *testing.T) {
	const maxEndpoints = 1_000
	h := newHarnessWith(t, webhooks.Limits{MaxEndpoints: maxEndpoints})
	cmd := func(url string) webhooks.CreateCommand {
		return webhooks.CreateCommand{URL: url, EventTypes: []string{model.WebhookOperationSucceeded}, Enabled: true}
	}
	first, err := h.createAs(t.Context(), h.admin, cmd("https://hooks.example.com/victim"))
	require.NoError(t, err)
	_, err = h.createAs(t.Context(), h.admin, cmd("https://hooks.example.com/victim"))
	var de *domain.Error
	require.ErrorAs(t, err, &de)
	require.Equal(t, domain.CodeWebhookEndpointExists, de.Code)
	require.Equal(t, first.Endpoint.ID.String(), de.ResourceID)
	require.NotContains(t, de.Message, "victim", "the URL may carry a token: never repeated")

	var last webhooks.WithSecret
	for i := 2; i <= maxEndpoints; i++ {
		last, err = h.createAs(t.Context(), h.admin, cmd(fmt.Sprintf("https://hooks.example.com/%d", i)))
		require.NoError(t, err, "endpoint %d", i)
	}
	_, err = h.createAs(t.Context(), h.admin, cmd("https://hooks.example.com/one-too-many"))
	require.Equal(t, domain.CodeLimitReached, domain.ErrorCode(err), "%v", err)
	page, err := h.svc.List(t.Context(), h.admin, ports.ListQuery{Limit: 10})
	require.NoError(t, err)
	require.Equal(t, last.Endpoint.ID, page.Items[0].ID, "the refused one was not written")

	taken := first.Endpoint.URL
	_, err = h.svc.Update(t.Context(), h.admin, last.Endpoint.ID, webhooks.Patch{URL: &taken})
	require.Equal(t, domain.CodeWebhookEndpointExists, domain.ErrorCode(err), "%v", err)
	_, err = h.svc.Update(t.Context(), h.admin, first.Endpoint.ID, webhooks.Patch{URL: &taken})
	require.NoError(t, err, "at the cap, an endpoint keeps its own URL")

	require.NoError(t, h.svc.Delete(t.Context(), h.admin, first.Endpoint.ID))
	_, err = h.createAs(t.Context(), h.admin, cmd("https://hooks.example.com/one-too-many"))
	require.NoError(t, err, "a delete makes room")
}
