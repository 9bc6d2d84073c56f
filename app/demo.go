package app

import (
	"fmt"
	"os"
)

// printDemo tells a new user how to call the service they just started.
func printDemo(addr, token string) {
	fmt.Fprintf(os.Stderr, `
  once is running on the embedded store at http://%[1]s  (API docs: http://%[1]s/docs)

  Demo token (workspace %[2]s, user %[3]s):
    export TOKEN=%[4]s

  Try it: connect a store (run the curl twice with the same key: the second answer is a replay;
  run both lines again for a new key and shop id: a new store)
    KEY=$(cat /proc/sys/kernel/random/uuid); SHOP=shop-${KEY%%%%-*}
    curl -si http://%[1]s/v1/stores \
      -H "Authorization: Bearer $TOKEN" -H "Idempotency-Key: $KEY" \
      -H "Content-Type: application/json" \
      -d '{"platform":"shopify","name":"My shop","external_shop_id":"'$SHOP'","credentials":{"api_key":"k","api_secret":"s"}}'

`, addr, DemoWorkspaceID, DemoUserID, token)
}
