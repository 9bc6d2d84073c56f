package app_test

import (
	"net/http"
	"testing"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
)

// A catalog sync only reads: no external effect.
var _ = registerKindCases(model.EventCatalogSync, kindCase{
	idempotent: []idempotentCase{
		{"startCatalogSync", "POST", http.StatusAccepted, func(t *testing.T, s *apitest.Server) (string, any, any) {
			return "/v1/stores/" + verifiedStore(t, s).String() + "/syncs", nil, nil
		}, jobAddsWith("catalog_syncs")},
	},
	job: func(string) jobCase {
		return jobCase{"catalog sync", func(t *testing.T, s *apitest.Server) (string, any) {
			return "/v1/stores/" + verifiedStore(t, s).String() + "/syncs", nil
		}, "/v1/syncs/", "failed", "succeeded", nil}
	},
})
