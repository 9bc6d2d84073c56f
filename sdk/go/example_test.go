package once_test

import (
	"context"
	"fmt"
	"net/http"

	once "github.com/oncehq/once/sdk/go"
)

// The front page's (README.md) example: it compiles, so it cannot drift
// from the SDK.
func ExampleIdempotent() {
	ctx, token, apiKey, apiSecret := context.Background(), "a bearer token", "key", "secret"
	c, _ := once.NewClient("http://127.0.0.1:8080", once.WithBearerToken(token))
	res, err := once.Idempotent(ctx, once.RetryPolicy{},
		func(ctx context.Context, key string) (*http.Response, error) {
			return c.CreateStore(ctx, &once.CreateStoreParams{IdempotencyKey: key}, once.CreateStoreRequest{
				Platform: once.CreateStoreRequestPlatformShopify, Name: "Acme EU", ExternalShopId: "acme-eu-4411",
				Credentials: once.StoreCredentialsBody{ApiKey: &apiKey, ApiSecret: &apiSecret}})
		}, once.ParseCreateStoreResponse)
	if err == nil && res.JSON201 != nil {
		fmt.Println(res.JSON201.Operation.Id)
	}
}
