// Package gotest holds the tests of the Go SDK (sdk/go, a module of its
// own) that need the service: the generated client against a real server,
// the idempotent helper behind a fault proxy, and a consumer outside the
// repository that installs the SDK with `go get`. The SDK module's own
// tests use only its dependencies, so that they add nothing to a
// consumer's go.sum.
package gotest

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	once "github.com/oncehq/once/sdk/go"
	"github.com/oncehq/once/testsupport/apitest"
)

// pollTimeout bounds every wait for background work.
const pollTimeout = 10 * time.Second

// TestGeneratedClientDrivesAWholeScenario drives one scenario, from
// connecting a store to a catalog sync, only through the client generated
// from the committed spec: if the spec is missing something a client needs,
// this does not compile or does not pass.
func TestGeneratedClientDrivesAWholeScenario(t *testing.T) {
	cfg := apitest.Config("")
	cfg.Dispatcher, cfg.Worker = true, true
	s := apitest.Start(t, cfg, nil)
	ctx := t.Context()

	c := adminClient(t, s)

	// Every operation the scenario starts; all must end succeeded.
	var started []uuid.UUID

	// 1. Connect a store and wait for its verification.
	apiKey, apiSecret := apitest.TestCredentials()
	storeRes, err := c.CreateStoreWithResponse(ctx, &once.CreateStoreParams{IdempotencyKey: uuid.NewString()}, once.CreateStoreRequest{
		Platform:       once.CreateStoreRequestPlatformShopify,
		Name:           "SDK shop",
		ExternalShopId: "sdk-shop-1",
		Credentials:    once.StoreCredentialsBody{ApiKey: &apiKey, ApiSecret: &apiSecret},
	})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, storeRes.StatusCode(), "createStore: %s", storeRes.Body)
	require.NotNil(t, storeRes.JSON201, "createStore: no typed body: %s", storeRes.Body)
	assert.NotContains(t, string(storeRes.Body), apiSecret, "credentials are never echoed")
	store := storeRes.JSON201.Store
	waitOperation(t, c, storeRes.JSON201.Operation.Id, "store verification")
	started = append(started, storeRes.JSON201.Operation.Id)
	gotStore, err := c.GetStoreWithResponse(ctx, store.Id)
	require.NoError(t, err)
	require.NotNil(t, gotStore.JSON200, "getStore: %d %s", gotStore.StatusCode(), gotStore.Body)
	assert.Equal(t, once.StoreStatusVerified, gotStore.JSON200.Status)

	// 2. Media: register, upload the bytes, complete, wait for the variants.
	img := testPNG(t)
	regRes, err := c.RegisterMediaWithResponse(ctx, &once.RegisterMediaParams{IdempotencyKey: uuid.NewString()}, once.RegisterMediaRequest{
		Filename:    "product.png",
		ContentType: once.RegisterMediaRequestContentTypeImagepng,
		SizeBytes:   int64(len(img)),
	})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, regRes.StatusCode(), "registerMedia: %s", regRes.Body)
	require.NotNil(t, regRes.JSON201)
	mediaID := regRes.JSON201.Media.Id
	assert.Equal(t, once.MediaStatusAwaitingUpload, regRes.JSON201.Media.Status)
	assert.Equal(t, http.MethodPut, regRes.JSON201.Upload.Method)
	assert.Equal(t, "/v1/media/"+mediaID.String()+"/content", regRes.JSON201.Upload.Url)

	upRes, err := c.UploadMediaContentWithBodyWithResponse(ctx, mediaID, "image/png", bytes.NewReader(img))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, upRes.StatusCode(), "uploadMediaContent: %s", upRes.Body)

	// completeMediaUpload takes no body.
	compRes, err := c.CompleteMediaUploadWithResponse(ctx, mediaID,
		&once.CompleteMediaUploadParams{IdempotencyKey: uuid.NewString()})
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, compRes.StatusCode(), "completeMediaUpload: %s", compRes.Body)
	require.NotNil(t, compRes.JSON202)
	started = append(started, compRes.JSON202.Operation.Id)
	var media once.Media
	poll(t, "media "+mediaID.String()+" ready with 2 variants", func() (bool, string) {
		r, err := c.GetMediaWithResponse(ctx, mediaID)
		require.NoError(t, err)
		require.NotNil(t, r.JSON200, "getMedia: %d %s", r.StatusCode(), r.Body)
		media = *r.JSON200
		if media.Status == once.MediaStatusRejected {
			t.Fatalf("media rejected: %s", deref(media.Reason))
		}
		return media.Status == once.MediaStatusReady, string(media.Status)
	})
	require.Len(t, media.Variants, 2, "variants: %+v", media.Variants)
	for _, v := range media.Variants {
		assert.Positive(t, v.SizeBytes, "variant %s", v.Name)
	}

	// 3. A product draft with the image, saved with If-Match.
	mediaIDs := []uuid.UUID{mediaID}
	description := "A mug."
	draft := once.ProductDraft{Title: "Mug", Description: &description, PriceMinor: 1299, Currency: "USD", MediaIds: &mediaIDs}
	createRes, err := c.CreateProductWithResponse(ctx, draft)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, createRes.StatusCode(), "createProduct: %s", createRes.Body)
	require.NotNil(t, createRes.JSON201)
	require.NotNil(t, createRes.Headers201, "createProduct: no headers parsed")
	require.NotNil(t, createRes.Headers201.ETag, "createProduct: no ETag")
	product := createRes.JSON201
	firstETag := *createRes.Headers201.ETag
	assert.Equal(t, `"1"`, firstETag)
	assert.Equal(t, mediaIDs, product.MediaIds)

	draft.Title, draft.PriceMinor = "Blue mug", 1499
	updRes, err := c.UpdateProductWithResponse(ctx, product.Id, &once.UpdateProductParams{IfMatch: firstETag}, draft)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, updRes.StatusCode(), "updateProduct: %s", updRes.Body)
	require.NotNil(t, updRes.JSON200)
	assert.Equal(t, "Blue mug", updRes.JSON200.Title)
	assert.Equal(t, product.Revision+1, updRes.JSON200.Revision)
	require.NotNil(t, updRes.Headers200)
	require.NotNil(t, updRes.Headers200.ETag)
	assert.NotEqual(t, firstETag, *updRes.Headers200.ETag)

	draft.Title = "Lost edit"
	staleRes, err := c.UpdateProductWithResponse(ctx, product.Id, &once.UpdateProductParams{IfMatch: firstETag}, draft)
	require.NoError(t, err)
	require.Equal(t, http.StatusPreconditionFailed, staleRes.StatusCode(), "stale If-Match: %s", staleRes.Body)
	require.NotNil(t, staleRes.ApplicationproblemJSON412, "412 not decoded as a Problem: %s", staleRes.Body)
	assert.Equal(t, "PRECONDITION_FAILED", staleRes.ApplicationproblemJSON412.Code)
	assert.Equal(t, int64(http.StatusPreconditionFailed), staleRes.ApplicationproblemJSON412.Status)
	assert.False(t, staleRes.ApplicationproblemJSON412.RetrySameKey)
	assert.Contains(t, staleRes.ContentType(), "application/problem+json")
	current, err := c.GetProductWithResponse(ctx, product.Id)
	require.NoError(t, err)
	require.NotNil(t, current.JSON200)
	assert.Equal(t, "Blue mug", current.JSON200.Title, "a stale save changes nothing")

	// 4. Publish to the store, and replay that request.
	publishKey := uuid.NewString()
	publishBody := once.PublishProductRequest{StoreId: store.Id}
	pubRes, err := c.PublishProductWithResponse(ctx, product.Id, &once.PublishProductParams{IdempotencyKey: publishKey}, publishBody)
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, pubRes.StatusCode(), "publishProduct: %s", pubRes.Body)
	require.NotNil(t, pubRes.JSON202)
	require.NotNil(t, pubRes.Headers202)
	assert.Nil(t, pubRes.Headers202.IdempotentReplayed, "a first execution is not a replay")
	publication := pubRes.JSON202.Publication
	assert.Equal(t, updRes.JSON200.Revision, publication.ProductRevision)
	started = append(started, pubRes.JSON202.Operation.Id)
	poll(t, "publication "+publication.Id.String()+" succeeded", func() (bool, string) {
		r, err := c.GetPublicationWithResponse(ctx, publication.Id)
		require.NoError(t, err)
		require.NotNil(t, r.JSON200, "getPublication: %d %s", r.StatusCode(), r.Body)
		publication = *r.JSON200
		if publication.Status == once.PublicationStatusFailed {
			t.Fatalf("publication failed: %s", deref(publication.Reason))
		}
		return publication.Status == once.PublicationStatusSucceeded, string(publication.Status)
	})
	require.NotNil(t, publication.ExternalListingId, "a succeeded publication names its listing")
	assert.NotEmpty(t, *publication.ExternalListingId)

	replay, err := c.PublishProductWithResponse(ctx, product.Id, &once.PublishProductParams{IdempotencyKey: publishKey}, publishBody)
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, replay.StatusCode(), "replayed publishProduct: %s", replay.Body)
	require.NotNil(t, replay.Headers202)
	require.NotNil(t, replay.Headers202.IdempotentReplayed, "replay without Idempotent-Replayed")
	assert.Equal(t, "true", *replay.Headers202.IdempotentReplayed)
	assert.JSONEq(t, string(pubRes.Body), string(replay.Body), "a replay returns the saved body")
	require.NotNil(t, pubRes.Headers202.Location, "publishProduct: no Location")
	require.NotNil(t, replay.Headers202.Location, "replayed publishProduct: no Location")
	assert.Equal(t, *pubRes.Headers202.Location, *replay.Headers202.Location)

	// 5. A catalog sync of the store (no body either).
	syncRes, err := c.StartCatalogSyncWithResponse(ctx, store.Id,
		&once.StartCatalogSyncParams{IdempotencyKey: uuid.NewString()})
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, syncRes.StatusCode(), "startCatalogSync: %s", syncRes.Body)
	require.NotNil(t, syncRes.JSON202)
	started = append(started, syncRes.JSON202.Operation.Id)
	syncID := syncRes.JSON202.Sync.Id
	poll(t, "catalog sync "+syncID.String()+" succeeded", func() (bool, string) {
		r, err := c.GetCatalogSyncWithResponse(ctx, syncID)
		require.NoError(t, err)
		require.NotNil(t, r.JSON200, "getCatalogSync: %d %s", r.StatusCode(), r.Body)
		if r.JSON200.Status == once.CatalogSyncStatusFailed {
			t.Fatalf("catalog sync failed: %s", deref(r.JSON200.Reason))
		}
		return r.JSON200.Status == once.CatalogSyncStatusSucceeded, string(r.JSON200.Status)
	})

	// 6. An AI text task on the product.
	instructions := "Short, friendly."
	aiRes, err := c.StartAITaskWithResponse(ctx, &once.StartAITaskParams{IdempotencyKey: uuid.NewString()}, once.StartAITaskRequest{
		ProductId: product.Id, Kind: once.StartAITaskRequestKindText, Instructions: &instructions,
	})
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, aiRes.StatusCode(), "startAITask: %s", aiRes.Body)
	require.NotNil(t, aiRes.JSON202)
	started = append(started, aiRes.JSON202.Operation.Id)
	taskID := aiRes.JSON202.Task.Id
	var task once.AITask
	poll(t, "AI task "+taskID.String()+" succeeded", func() (bool, string) {
		r, err := c.GetAITaskWithResponse(ctx, taskID)
		require.NoError(t, err)
		require.NotNil(t, r.JSON200, "getAITask: %d %s", r.StatusCode(), r.Body)
		task = *r.JSON200
		if task.Status == once.AITaskStatusFailed {
			t.Fatalf("AI task failed: %s", deref(task.Reason))
		}
		return task.Status == once.AITaskStatusSucceeded, string(task.Status)
	})
	assert.Equal(t, once.AITaskKindText, task.Kind)
	require.NotNil(t, task.Result, "a succeeded text task has a result")
	assert.NotEmpty(t, *task.Result)

	// 7. Every operation the scenario started is listed as succeeded, each
	// once (the replayed publish started nothing new).
	for _, id := range started {
		waitOperation(t, c, id, "operation")
	}
	status := once.ListOperationsParamsStatusSucceeded
	limit := int64(100)
	listRes, err := c.ListOperationsWithResponse(ctx, &once.ListOperationsParams{Status: &status, Limit: &limit})
	require.NoError(t, err)
	require.NotNil(t, listRes.JSON200, "listOperations: %d %s", listRes.StatusCode(), listRes.Body)
	listed := map[uuid.UUID]int{}
	for _, op := range listRes.JSON200.Items {
		assert.Equal(t, once.OperationStatusSucceeded, op.Status, "operation %s (%s) in a status=succeeded list", op.Id, op.Kind)
		listed[op.Id]++
	}
	for _, id := range started {
		assert.Equal(t, 1, listed[id], "operation %s listed once as succeeded", id)
	}
	assert.Len(t, listRes.JSON200.Items, len(started), "no other operation: %s", listRes.Body)
	assert.False(t, listRes.JSON200.HasMore, "one page")
}

// waitOperation waits for the operation's end with the SDK's helper
// (getOperation with ?wait=) and requires it succeeded.
func waitOperation(t *testing.T, c *once.ClientWithResponses, id uuid.UUID, what string) once.Operation {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), pollTimeout)
	defer cancel()
	op, err := once.WaitForOperation(ctx, c, id)
	require.NoError(t, err, "%s (operation %s): last state %+v", what, id, op)
	if op.Status == once.OperationStatusFailed {
		t.Fatalf("%s: operation %s (%s) failed: %s", what, id, op.Kind, deref(op.Error))
	}
	return *op
}

// poll calls check until it reports done or pollTimeout passes; check also
// returns the state it saw, for the failure message.
func poll(t *testing.T, what string, check func() (done bool, state string)) {
	t.Helper()
	deadline := time.Now().Add(pollTimeout)
	for {
		done, state := check()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: still %q", pollTimeout, what, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// testPNG is a small real PNG: a 64x48 gradient.
func testPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for y := range 48 {
		for x := range 64 {
			img.Set(x, y, color.RGBA{R: uint8(x * 4), G: uint8(y * 5), B: 128, A: 255})
		}
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	return buf.Bytes()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
