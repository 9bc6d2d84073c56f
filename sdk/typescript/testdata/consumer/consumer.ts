// A program outside the repository that uses the packed SDK the way its
// README says; the pack test installs the tarball beside it, compiles it
// with tsc --strict and runs it against a server. It creates a store
// through idempotent and prints the store's id.
import { createOnceClient, idempotent } from "@oncehq/once-sdk";

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) {
    throw new Error(`${name} is not set`);
  }
  return value;
};

const client = createOnceClient(env("ONCE_URL"), env("ONCE_TOKEN"), {
  headers: { "X-Request-Id": env("ONCE_REQUEST_ID") },
});
const res = await idempotent((key) =>
  client.POST("/v1/stores", {
    params: { header: { "Idempotency-Key": key } },
    body: {
      platform: "shopify",
      name: "Packed shop",
      external_shop_id: env("ONCE_SHOP"),
      credentials: { api_key: env("ONCE_API_KEY"), api_secret: env("ONCE_API_SECRET") },
    },
  }),
);
if (res.data === undefined) {
  console.error(`createStore: ${res.response.status} ${JSON.stringify(res.error)}`);
  process.exit(1);
}
console.log(res.data.store.id, res.response.headers.get("X-Request-Id"));
