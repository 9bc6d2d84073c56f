// Command consumer is a program outside the repository that uses the Go SDK
// the way its README says: the consumer test copies it into a fresh module,
// `go get`s the SDK and runs it against a server. It creates a store
// through once.Idempotent and prints the store's id.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"

	once "github.com/oncehq/once/sdk/go"
)

func main() {
	token := os.Getenv("ONCE_TOKEN")
	c, err := once.NewClient(os.Getenv("ONCE_URL"), once.WithRequestEditorFn(
		func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
	if err != nil {
		fail(err)
	}
	apiKey, apiSecret := os.Getenv("ONCE_API_KEY"), os.Getenv("ONCE_API_SECRET")
	res, err := once.Idempotent(context.Background(), once.RetryPolicy{},
		func(ctx context.Context, key string) (*http.Response, error) {
			return c.CreateStore(ctx, &once.CreateStoreParams{IdempotencyKey: key}, once.CreateStoreRequest{
				Platform: once.CreateStoreRequestPlatformShopify, Name: "Consumer shop", ExternalShopId: os.Getenv("ONCE_SHOP"),
				Credentials: once.StoreCredentialsBody{ApiKey: &apiKey, ApiSecret: &apiSecret}})
		}, once.ParseCreateStoreResponse)
	if err != nil {
		fail(err)
	}
	if res.JSON201 == nil {
		fail(fmt.Errorf("createStore: %d %s", res.StatusCode(), res.Body))
	}
	fmt.Println(res.JSON201.Store.Id)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "consumer:", err)
	os.Exit(1)
}
