package httpapi

import (
	"github.com/danielgtaylor/huma/v2"
)

// Realistic values the spec shows for each property, so the docs' sample
// requests and responses read like real traffic rather than "string". Keyed
// by "Schema.property" first, then by property name alone. A property may
// say its own instead, in its example tag (CatalogSync.items_synced).
var propertyExamples = map[string]any{
	// Identifiers and times.
	"id":             "0b7c1f0e-2f4a-4d8c-9a51-3c2e7f6d8b90",
	"store_id":       "5d6e7f80-91a2-4b3c-8d4e-5f60718293a4",
	"product_id":     "2c9a4b1e-7d3f-4e8a-b6c5-1f0e9d8c7b6a",
	"operation_id":   "7e1d2c3b-4a59-4867-9f8e-0d1c2b3a4958",
	"aggregate_id":   "5d6e7f80-91a2-4b3c-8d4e-5f60718293a4",
	"resource_id":    "5d6e7f80-91a2-4b3c-8d4e-5f60718293a4",
	"created_at":     "2026-03-14T09:26:53Z",
	"updated_at":     "2026-03-14T09:26:55Z",
	"next_before":    "7e1d2c3b-4a59-4867-9f8e-0d1c2b3a4958",
	"starting_after": "7e1d2c3b-4a59-4867-9f8e-0d1c2b3a4958",
	"has_more":       false,

	// Tokens.
	"RevokeTokenRequest.token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJleGFtcGxlIn0.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg",
	"tokens_issued_before":     "2026-03-14T09:26:54Z",

	// Stores.
	"platform":                "shopify",
	"Store.name":              "Acme EU",
	"CreateStoreRequest.name": "Acme EU",
	"external_shop_id":        "acme-eu-4411",
	"credential_version":      1,
	"api_key":                 "shpka_3f9c2e71b0d84a56",
	"api_secret":              "shpss_8a1d0c7e95b24f36",
	"Store.status":            "verified",

	// Products and publishing.
	"title":               "Linen shirt, sand",
	"description":         "Breathable linen shirt with a relaxed fit.",
	"price_minor":         4900,
	"currency":            "EUR",
	"media_ids":           []any{"9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"},
	"revision":            3,
	"product_revision":    3,
	"external_listing_id": "gid://shopify/Product/8123456789",
	"Publication.status":  "succeeded",
	"waits_behind":        "2b6f0c1e-7d3a-4e59-9c8b-1a0f5e6d7c42",

	// Media.
	"filename":                "linen-shirt-front.png",
	"content_type":            "image/png",
	"size_bytes":              482113,
	"Media.status":            "ready",
	"MediaVariant.name":       "thumbnail",
	"MediaVariant.size_bytes": 9120,
	"method":                  "PUT",
	"url":                     "/v1/media/0b7c1f0e-2f4a-4d8c-9a51-3c2e7f6d8b90/content",
	"sha256":                  "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	"expires_at":              "2026-03-14T09:41:53Z",
	"UploadTarget.headers":    map[string]any{"Content-Type": "image/png", "Content-Length": "482113", "x-amz-checksum-sha256": "n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg="},
	"Download.url":            "https://media.s3.example/media/0b7c1f0e-2f4a-4d8c-9a51-3c2e7f6d8b90/thumbnail",
	"Media.downloads":         map[string]any{"thumbnail": map[string]any{"url": "https://media.s3.example/media/0b7c1f0e-2f4a-4d8c-9a51-3c2e7f6d8b90/thumbnail", "expires_at": "2026-03-14T09:41:53Z"}},

	// Material transfers.
	"source_urls":             []any{"https://supplier.example/a.png", "https://supplier.example/b.png"},
	"MaterialItem.index":      0,
	"MaterialItem.done":       true,
	"MaterialItem.size_bytes": 482113,
	"MaterialTransfer.status": "running",

	// AI tasks.
	"AITask.kind":             "text",
	"StartAITaskRequest.kind": "text",
	"instructions":            "Two sentences, friendly tone, mention the fabric.",
	"result":                  "A relaxed linen shirt that breathes on hot days. Soft, light and easy to wear.",
	"AITask.status":           "succeeded",

	// A state without an example of its own (a new task type's).
	"status": "succeeded",

	// Webhook endpoints.
	"WebhookEndpoint.url":              "https://example.com/hooks/once",
	"WebhookEndpointCreated.url":       "https://example.com/hooks/once",
	"UpdateWebhookEndpointRequest.url": "https://example.com/hooks/once",
	"event_types":                      []any{"operation.succeeded", "operation.failed"},
	"enabled":                          true,
	"signing_key_version":              2,
	"previous_key_expires_at":          "2026-03-15T09:26:55Z",
	"WebhookDelivery.state":            "waiting",
	"WebhookDelivery.attempts":         0,
	"WebhookDelivery.last_error":       "webhook receiver answered 503",
	"next_attempt_at":                  "2026-03-14T09:31:55Z",

	// Operations and failures.
	"Operation.kind":   "store.verify",
	"Operation.status": "succeeded",
	"resource_type":    "store",
	"error":            "the platform rejected the credentials",
	"reason":           "the platform rejected the credentials",
	"event_type":       "store.credentials.verify",
	"aggregate_type":   "store",
	"attempt_count":    10,
	"last_error":       "publish: broker unavailable",
	"redriven":         3,

	"Operation.cancel_requested_at":     "2026-03-14T09:27:01Z",
	"OperationDelivery.status":          "pending",
	"OperationDelivery.attempts":        2,
	"OperationDelivery.next_attempt_at": "2026-03-14T09:27:05Z",
	"DeadLetter.stage":                  "job",
	"DeadLetterGroup.count":             2,
	"DeadLetterGroup.event_ids":         []any{"6a5b4c3d-2e1f-4a09-8b7c-6d5e4f3a2b1c", "1f2e3d4c-5b6a-4798-8a9b-0c1d2e3f4a5b"},

	// API keys.
	"APIKey.name":        "ERP sync",
	"APIKeyCreated.name": "ERP sync",
	"scopes":             []any{"media:read", "products:write"},
	"created_by":         "3a4b5c6d-7e8f-4091-a2b3-c4d5e6f70819",
	"last_used_at":       "2026-03-14T10:02:00Z",
	"revoked_at":         "2026-03-15T08:00:00Z",

	// Members.
	"user_id": "3a4b5c6d-7e8f-4091-a2b3-c4d5e6f70819",
	"role":    "member",

	// Problems.
	"Problem.title":       "Conflict",
	"Problem.status":      409,
	"detail":              "this Idempotency-Key was used with a different request",
	"instance":            "urn:once:request:0193a4b2-7c1d-7e3f-9a8b-1c2d3e4f5a6b",
	"retry_same_key":      false,
	"location":            "body.name",
	"message":             "expected length >= 1",
	"Problem.resource_id": "5d6e7f80-91a2-4b3c-8d4e-5f60718293a4",
}

// parameterExamples are the examples of path, query and header parameters.
var parameterExamples = map[string]any{
	"id":              "5d6e7f80-91a2-4b3c-8d4e-5f60718293a4",
	"user_id":         "3a4b5c6d-7e8f-4091-a2b3-c4d5e6f70819",
	"status":          "succeeded",
	"before":          "7e1d2c3b-4a59-4867-9f8e-0d1c2b3a4958",
	"starting_after":  "7e1d2c3b-4a59-4867-9f8e-0d1c2b3a4958",
	"limit":           20,
	"store_id":        "5d6e7f80-91a2-4b3c-8d4e-5f60718293a4",
	"product_id":      "2c9a4b1e-7d3f-4e8a-b6c5-1f0e9d8c7b6a",
	"platform":        "shopify",
	"kind":            "listing.publish",
	"If-Match":        `"3"`,
	"Idempotency-Key": "8f421c70-5a4c-4d8e-9f4e-0c2b1a7d9e11",
}

// addExamples gives every property and parameter without an example one
// from the tables above. Objects and arrays of objects are left to the
// schemas they refer to.
func addExamples(o *huma.OpenAPI) {
	for name, s := range o.Components.Schemas.Map() {
		for prop, ps := range s.Properties {
			if ps.Ref != "" || len(ps.Examples) > 0 {
				continue
			}
			if ps.Type == huma.TypeArray && ps.Items != nil && ps.Items.Ref != "" {
				continue
			}
			if ex, ok := propertyExamples[name+"."+prop]; ok {
				ps.Examples = []any{fitEnum(ps, ex)}
			} else if ex, ok := propertyExamples[prop]; ok {
				ps.Examples = []any{fitEnum(ps, ex)}
			}
		}
	}
	for _, item := range o.Paths {
		for _, op := range operationsOf(item) {
			if op == nil {
				continue
			}
			for _, p := range op.Parameters {
				if p.Example != nil || len(p.Examples) > 0 || (p.Schema != nil && len(p.Schema.Examples) > 0) {
					continue
				}
				if ex, ok := parameterExamples[p.Name]; ok {
					p.Example = fitEnum(p.Schema, ex)
				}
			}
		}
	}
}

// fitEnum keeps ex if the schema allows it, else takes the schema's first
// allowed value: one example name ("status") serves several enums.
func fitEnum(s *huma.Schema, ex any) any {
	if s == nil || len(s.Enum) == 0 {
		return ex
	}
	for _, v := range s.Enum {
		if v == ex {
			return ex
		}
	}
	return s.Enum[0]
}
