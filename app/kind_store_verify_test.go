package app_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
)

var _ = registerKindCases(model.EventStoreCredentialsVerify, kindCase{
	idempotent: []idempotentCase{
		{"createStore", "POST", http.StatusCreated, func(t *testing.T, s *apitest.Server) (string, any, any) {
			shop := uuid.NewString()[:8]
			return "/v1/stores", storeBody("a-" + shop), storeBody("b-" + shop)
		}, jobAddsWith("stores")},
		{"replaceStoreAuthorization", "PUT", http.StatusAccepted, func(t *testing.T, s *apitest.Server) (string, any, any) {
			id := createStore(t, s, "replace-"+uuid.NewString()[:8]).Store.ID
			return "/v1/stores/" + id.String() + "/authorization", map[string]any{"credentials": testCredentials(1)}, map[string]any{"credentials": testCredentials(2)}
		}, jobAdds()},
		{"verifyStore", "POST", http.StatusAccepted, func(t *testing.T, s *apitest.Server) (string, any, any) {
			id := createStore(t, s, "verify-"+uuid.NewString()[:8]).Store.ID
			return "/v1/stores/" + id.String() + "/verifications", nil, nil
		}, jobAdds()},
	},
	job: func(ledgerPath string) jobCase {
		return jobCase{"verification", func(t *testing.T, s *apitest.Server) (string, any) {
			return "/v1/stores", storeBody("gives-up-" + uuid.NewString()[:8])
		}, "/v1/stores/", "verification_failed", "verified", ledgerEffects(ledgerPath, func(op started) simhttp.Filter {
			return simhttp.Filter{Kind: simhttp.KindVerify, Token: op.token, EffectsOnly: true}
		})}
	},
})

// testCredentials are the simulator's test credentials, the n-th variant.
func testCredentials(n int) map[string]any {
	apiKey, apiSecret := apitest.TestCredentials()
	return map[string]any{"api_key": fmt.Sprintf("%s-%d", apiKey, n), "api_secret": apiSecret}
}
