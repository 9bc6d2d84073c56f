package httpapi

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/yaml"
)

// LocalServer is the address `make run` listens on, the spec's server.
const LocalServer = "http://127.0.0.1:8080"

// tagDescriptions declares every tag an operation uses (a test checks).
var tagDescriptions = map[string]string{
	"stores":     "Connected marketplace stores: their sealed credentials, verification and catalog syncs.",
	"products":   "Product drafts, edited with optimistic concurrency (ETag / If-Match).",
	"publishing": "Publishing a product to a store as a listing.",
	"media":      "Images: register, upload the bytes, complete; the worker validates and derives sizes once.",
	"materials":  "Copying supplier material from URLs into the object store, item by item.",
	"ai":         "Model-backed tasks on a product: text, category or image, billed once.",
	"operations": "Background work started by idempotent writes; poll until succeeded or failed.",
	"outbox":     "Events that could not be delivered (dead letters) and their redrive; admins only.",
	"workspace":  "Members of the workspace; admins only.",
	"webhooks":   "Endpoints the workspace's events are pushed to, signed per the Standard Webhooks specification; admins only.",
	"api-keys":   "Keys of machine clients, each with its scopes, sent as a bearer token; admins only.",
}

// idempotencyRules ends the description of every idempotent operation.
const idempotencyRules = "\n\n**Idempotency.** Send an `Idempotency-Key` header (a UUID made once per logical " +
	"operation) and send the same key with the same request on every retry. A retry after the first execution " +
	"finished gets its saved response with `Idempotent-Replayed: true`; while it still runs, `409 " +
	"IDEMPOTENCY_REQUEST_IN_PROGRESS` with `Retry-After`; the same key with a different request, `409 " +
	"IDEMPOTENCY_KEY_REUSED` (never retry that one). Keys are scoped to the workspace, user (or API key), method and path, " +
	"and kept at least 24 hours."

// License is the SPDX identifier of the license of once, its spec and its
// SDKs (the LICENSE file at the repository's root; sdk/typescript's
// package.json names it too, and a test holds them together).
const (
	License    = "Apache-2.0"
	LicenseURL = "https://www.apache.org/licenses/LICENSE-2.0"
)

// describeSpec fills the document-level parts of the spec.
func describeSpec(o *huma.OpenAPI) {
	o.Servers = []*huma.Server{{URL: LocalServer, Description: "`make run` on your machine"}}
	o.Info.License = &huma.License{Name: License, URL: LicenseURL}
	o.Info.Contact = &huma.Contact{Name: "once", URL: "https://github.com/oncehq/once"}
	names := make([]string, 0, len(tagDescriptions))
	for n := range tagDescriptions {
		names = append(names, n)
	}
	sort.Strings(names)
	o.Tags = nil
	for _, n := range names {
		o.Tags = append(o.Tags, &huma.Tag{Name: n, Description: tagDescriptions[n]})
	}
}

// Spec30YAML is the spec downgraded to OpenAPI 3.0 for generators that do
// not read 3.1 (oapi-codegen), with what 3.0 does not allow removed:
// contentMediaType, and siblings of $ref (the referenced schema keeps its
// own description).
func Spec30YAML(api huma.API) ([]byte, error) {
	raw, err := api.OpenAPI().Downgrade()
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	doc = strip30(doc)
	raw, err = json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	err = yaml.Convert(&out, bytes.NewReader(raw))
	return out.Bytes(), err
}

func strip30(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"]; ok {
			return map[string]any{"$ref": ref}
		}
		delete(x, "contentMediaType")
		for k, e := range x {
			x[k] = strip30(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = strip30(e)
		}
	}
	return v
}

// operationsOf lists a path's operations of the methods we serve; absent
// ones are nil.
func operationsOf(item *huma.PathItem) []*huma.Operation {
	return []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete}
}
