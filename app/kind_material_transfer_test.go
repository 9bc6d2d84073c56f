package app_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
)

var _ = registerKindCases(model.EventMaterialTransfer, kindCase{
	idempotent: []idempotentCase{
		{"startMaterialTransfer", "POST", http.StatusAccepted, func(t *testing.T, s *apitest.Server) (string, any, any) {
			return "/v1/material-transfers",
				map[string]any{"source_urls": []string{"https://supplier.example/a.png", "https://supplier.example/b.png"}},
				map[string]any{"source_urls": []string{"https://supplier.example/c.png"}}
		}, jobAddsWith("material_transfers")},
	},
	// A transfer's effect is the file it copies, by its source URL.
	job: func(ledgerPath string) jobCase {
		var sourceURL string // of the transfer under test
		return jobCase{"material transfer", func(t *testing.T, s *apitest.Server) (string, any) {
			sourceURL = "https://supplier.example/" + uuid.NewString() + ".png"
			return "/v1/material-transfers", map[string]any{"source_urls": []string{sourceURL}}
		}, "/v1/material-transfers/", "failed", "succeeded", ledgerEffects(ledgerPath, func(started) simhttp.Filter {
			return simhttp.Filter{Kind: simhttp.KindFetch, Subject: sourceURL}
		})}
	},
})
