// Package once is the Go client of the once API, a module of its own:
//
//	go get github.com/oncehq/once/sdk/go
//
// (released with tags sdk/go/vX.Y.Z). client.gen.go is generated from
// openapi/openapi-3.0.yaml by oapi-codegen (`make sdk`; `make
// openapi-check` fails if it is stale), internal/params encodes its
// parameters, and three files are written by hand: idempotent.go, safe
// retries of idempotent calls, wait.go, WaitForOperation, which reads an
// operation with ?wait= until it ends, and auth.go, the credential every
// request sends: a user's token (WithBearerToken) or an API key
// (WithAPIKey).
//
//	c, _ := once.NewClient(baseURL, once.WithAPIKey(os.Getenv("ONCE_API_KEY")))
//	res, err := once.Idempotent(ctx, once.RetryPolicy{},
//		func(ctx context.Context, key string) (*http.Response, error) {
//			return c.CreateStore(ctx, &once.CreateStoreParams{IdempotencyKey: key}, body)
//		}, once.ParseCreateStoreResponse)
package once
