package app_test

import (
	"net/http"
	"testing"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
)

// Media is processed in our own object store: no external effect.
var _ = registerKindCases(model.EventMediaProcess, kindCase{
	idempotent: []idempotentCase{
		{"registerMedia", "POST", http.StatusCreated, func(t *testing.T, s *apitest.Server) (string, any, any) {
			return "/v1/media", map[string]any{"filename": "a.png", "content_type": "image/png", "size_bytes": 100},
				map[string]any{"filename": "a.png", "content_type": "image/png", "size_bytes": 101}
		}, map[string]int{"media": 1, "idempotency_requests": 1}},
		{"completeMediaUpload", "POST", http.StatusAccepted, func(t *testing.T, s *apitest.Server) (string, any, any) {
			return "/v1/media/" + uploadedMedia(t, s).String() + "/complete", nil, nil
		}, jobAdds()},
	},
	job: func(string) jobCase {
		return jobCase{"media", func(t *testing.T, s *apitest.Server) (string, any) {
			return "/v1/media/" + uploadedMedia(t, s).String() + "/complete", nil
		}, "/v1/media/", "rejected", "ready", nil}
	},
})
