package app_test

import (
	"net/http"
	"testing"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
)

var _ = registerKindCases(model.EventAITask, kindCase{
	idempotent: []idempotentCase{
		{"startAITask", "POST", http.StatusAccepted, func(t *testing.T, s *apitest.Server) (string, any, any) {
			product := createProduct(t, s)
			return "/v1/ai-tasks", map[string]any{"product_id": product, "kind": "text"}, map[string]any{"product_id": product, "kind": "category"}
		}, jobAddsWith("ai_tasks")},
	},
	job: func(ledgerPath string) jobCase {
		return jobCase{"AI task", func(t *testing.T, s *apitest.Server) (string, any) {
			return "/v1/ai-tasks", map[string]any{"product_id": createProduct(t, s), "kind": "text"}
		}, "/v1/ai-tasks/", "failed", "succeeded", ledgerEffects(ledgerPath, func(op started) simhttp.Filter {
			return simhttp.Filter{Kind: simhttp.KindGenerate, Token: op.token, EffectsOnly: true}
		})}
	},
})
