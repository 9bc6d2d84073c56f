package httpapi

import (
	"net/http"

	swgui "github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5emb"
)

// DocsPath is where the API reference is served.
const DocsPath = "/docs"

// docsHandler serves Swagger UI with every asset embedded in the binary
// (github.com/swaggest/swgui/v5emb), so the reference works without
// internet access. It reads the spec huma serves at /openapi.json.
func docsHandler() http.Handler {
	return v5emb.NewHandlerWithConfig(swgui.Config{
		Title:       "once API",
		SwaggerJSON: "/openapi.json",
		BasePath:    DocsPath + "/",
		// The bearer token is pasted into the Authorize dialog; requests go
		// straight to this server, never through a proxy.
		SettingsUI: map[string]string{"persistAuthorization": "true"},
	})
}

// registerDocs mounts the reference on mux.
func registerDocs(mux *http.ServeMux) {
	h := docsHandler()
	mux.Handle("GET "+DocsPath, h)
	mux.Handle("GET "+DocsPath+"/", h)
}
