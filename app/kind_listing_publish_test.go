package app_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
)

var _ = registerKindCases(model.EventListingPublish, kindCase{
	idempotent: []idempotentCase{
		{"publishProduct", "POST", http.StatusAccepted, func(t *testing.T, s *apitest.Server) (string, any, any) {
			store, product := verifiedStore(t, s), createProduct(t, s)
			return "/v1/products/" + product.String() + "/publications", map[string]any{"store_id": store}, map[string]any{"store_id": uuid.New()}
		}, jobAddsWith("publications")},
	},
	job: func(ledgerPath string) jobCase {
		return jobCase{"publication", func(t *testing.T, s *apitest.Server) (string, any) {
			store, product := verifiedStore(t, s), createProduct(t, s)
			return "/v1/products/" + product.String() + "/publications", map[string]any{"store_id": store}
		}, "/v1/publications/", "failed", "succeeded", ledgerEffects(ledgerPath, func(op started) simhttp.Filter {
			return simhttp.Filter{Kind: simhttp.KindListing, Token: op.token, EffectsOnly: true}
		})}
	},
})
