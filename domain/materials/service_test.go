package materials_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/fetchpolicy"
	"github.com/oncehq/once/domain/materials"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestStartWritesAPendingTransferWithAnIdsOnlyEvent(t *testing.T) {
	h := newHarness(t)
	sources := urls(3)
	ctx := domain.WithTraceparent(context.Background(), traceparent)
	tr, op, msg := h.start(t, ctx, sources)

	assert.Equal(t, model.TaskPending, tr.Status)
	assert.Equal(t, op.ID, tr.OperationID)
	assert.Equal(t, model.OperationMaterialTransfer, op.Kind)
	assert.Equal(t, model.OperationPending, op.Status)
	assert.Equal(t, "material_transfer", op.ResourceType)
	assert.Equal(t, tr.ID, op.ResourceID)
	assert.Equal(t, traceparent, msg.Traceparent)

	require.NoError(t, model.CheckPayloadSafe(msg.Payload))
	for _, u := range sources {
		assert.NotContains(t, string(msg.Payload), u)
	}
	assert.NotContains(t, string(msg.Payload), "cdn.example.com")
	assert.NotContains(t, string(msg.Payload), signature)
	var run model.MaterialTransferRun
	require.NoError(t, json.Unmarshal(msg.Payload, &run))
	assert.Equal(t, model.MaterialTransferRun{TransferID: tr.ID, JobOperation: model.JobOperation{OperationID: op.ID}}, run)
	assert.Equal(t, "material/cdn.example.com", msg.Destination, "the source's host")
	assert.Empty(t, msg.OrderingKey)

	got, err := h.svc.Get(context.Background(), model.Principal{WorkspaceID: h.ws}, tr.ID)
	require.NoError(t, err)
	require.Len(t, got.Items, 3)
	for i, it := range got.Items {
		assert.Equal(t, i, it.Index)
		assert.Equal(t, sources[i], it.SourceURL, "the URL stays in the database")
		assert.False(t, it.Done)
	}

	_, err = h.svc.Get(context.Background(), model.Principal{WorkspaceID: uuid.New()}, tr.ID)
	assert.True(t, domain.IsCode(err, domain.CodeNotFound), "another workspace: %v", err)
}

func TestStartRefusesBadSourcesWithoutEchoingThem(t *testing.T) {
	h := newHarness(t)
	long := "https://cdn.example.com/" + strings.Repeat("a", materials.MaxURLLength-len("https://cdn.example.com/")+1)
	cases := map[string][]string{
		"none":        nil,
		"too many":    urls(materials.MaxItems + 1),
		"ftp":         {"ftp://cdn.example.com/a.jpg?" + signature},
		"relative":    {"/a.jpg?" + signature},
		"no host":     {"https:///a.jpg?" + signature},
		"not a URL":   {"https://cdn example.com/%zz?" + signature},
		"opaque":      {"https:cdn.example.com?" + signature},
		"too long":    {long},
		"one bad one": append(urls(2), "javascript:alert(1)//"+signature),
		"credentials": {"https://user:pw@cdn.example.com/a.jpg?" + signature},
		"loopback":    {"http://127.0.0.1:8080/a.jpg?" + signature},
		"metadata":    {"http://169.254.169.254/latest/meta-data/?" + signature},
		"mapped":      {"http://[::ffff:10.0.0.1]/a.jpg?" + signature},
		"localhost":   {"http://localhost/a.jpg?" + signature},
		"shorthand":   {"http://0x7f.1/a.jpg?" + signature},
	}
	for name, sources := range cases {
		t.Run(name, func(t *testing.T) {
			err := h.uow.Transact(context.Background(), h.ws, func(ctx context.Context, tx ports.Tx) error {
				_, _, err := h.svc.Start(ctx, tx, model.Principal{WorkspaceID: h.ws, UserID: uuid.New()}, sources)
				return err
			})
			require.True(t, domain.IsCode(err, domain.CodeValidation), "%v", err)
			assert.NotContains(t, err.Error(), signature)
			assert.NotContains(t, err.Error(), "cdn")
			assert.NotEmpty(t, fieldOf(err), "the refusal names the input")
		})
	}
	// Limits are inclusive.
	exact := "https://cdn.example.com/" + strings.Repeat("a", materials.MaxURLLength-len("https://cdn.example.com/"))
	require.NoError(t, h.uow.Transact(context.Background(), h.ws, func(ctx context.Context, tx ports.Tx) error {
		_, _, err := h.svc.Start(ctx, tx, model.Principal{WorkspaceID: h.ws}, append(urls(materials.MaxItems-1), exact))
		return err
	}))
}

func fieldOf(err error) string {
	var de *domain.Error
	if errors.As(err, &de) {
		return de.Field
	}
	return ""
}

func TestCheckSourcesNamesTheItemThatPointsInside(t *testing.T) {
	h := newHarness(t)
	h.resolver.Set("cdn.example.com", "93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c")
	h.resolver.Set("rebound.example.com", "93.184.215.14", "169.254.169.254") // one bad answer is enough
	h.resolver.Set("mapped.example.com", "::ffff:127.0.0.1")
	h.resolver.Set("corp.example.com", "10.1.2.3")

	require.NoError(t, h.svc.CheckSources(context.Background(), urls(3)))
	require.NoError(t, h.svc.CheckSources(context.Background(), []string{"https://unknown.example/a.png"}),
		"a name that does not resolve has nothing to reach; the fetcher's dial guard covers a later answer")

	cases := map[string]struct {
		sources []string
		field   string
		reason  string
	}{
		"literal loopback":     {[]string{urls(1)[0], "http://127.0.0.1/a?" + signature}, "source_urls[1]", "loopback"},
		"resolves to metadata": {[]string{urls(1)[0], urls(1)[0], "https://rebound.example.com/a?" + signature}, "source_urls[2]", "link-local"},
		"resolves mapped":      {[]string{"https://mapped.example.com/a?" + signature}, "source_urls[0]", "loopback"},
		"resolves private":     {[]string{urls(1)[0], "https://corp.example.com/a?" + signature}, "source_urls[1]", "private"},
		"credentials":          {[]string{urls(1)[0], "https://u:p@cdn.example.com/a?" + signature}, "source_urls[1]", "user name or password"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			err := h.svc.CheckSources(context.Background(), c.sources)
			require.True(t, domain.IsCode(err, domain.CodeValidation), "%v", err)
			assert.Equal(t, c.field, fieldOf(err))
			assert.Contains(t, err.Error(), c.field+" ")
			assert.Contains(t, err.Error(), c.reason)
			assert.NotContains(t, err.Error(), signature)
			assert.NotContains(t, err.Error(), "example.com", "the message names the index, not the host")
		})
	}
}

func TestCheckSourcesResolvesEachHostOnceAndNotLiteralsOrAllowedHosts(t *testing.T) {
	h := newHarness(t)
	h.resolver.Set("cdn.example.com", "93.184.215.14")
	sources := append(urls(5), "https://93.184.215.14/a.png", "https://other.example.com/b.png")
	require.NoError(t, h.svc.CheckSources(context.Background(), sources))
	assert.Equal(t, []string{"cdn.example.com", "other.example.com"}, h.resolver.Lookups())
}

func TestCheckSourcesFailsClosedWhenTheResolverCannotAnswer(t *testing.T) {
	h := newHarness(t)
	h.resolver.Fail("cdn.example.com", domain.Errorf(domain.CodeUnavailable, "dns timeout"))
	err := h.svc.CheckSources(context.Background(), urls(2))
	require.True(t, domain.IsCode(err, domain.CodeUnavailable), "%v", err)
	assert.Contains(t, err.Error(), "source_urls[0]")
	assert.NotContains(t, err.Error(), signature)
}

func TestAllowListsLetPrivateDeploymentsFetchInside(t *testing.T) {
	policy, err := fetchpolicy.Parse("10.0.0.0/8", "minio.internal")
	require.NoError(t, err)
	resolver := testkit.NewResolver()
	resolver.Set("files.corp.example", "10.4.5.6")
	resolver.Set("minio.internal", "192.168.7.7")
	uow := memory.NewUnitOfWork(memory.NewDB())
	svc := materials.NewService(uow, system.NewClock(), system.NewIDs(), policy, resolver)

	require.NoError(t, svc.CheckSources(context.Background(), []string{
		"http://10.0.0.9/a.png", "https://files.corp.example/b.png", "http://minio.internal:9000/bucket/c.png",
	}))
	assert.Equal(t, []string{"files.corp.example"}, resolver.Lookups(), "an allowed host is not resolved")
	err = svc.CheckSources(context.Background(), []string{"http://192.168.7.7/a.png"})
	assert.True(t, domain.IsCode(err, domain.CodeValidation), "ranges outside the allow-list stay closed: %v", err)
}
