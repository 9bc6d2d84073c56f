// A webhook receiver as a user would write one: the stock standardwebhooks
// package checks every request, nothing of once's code is used. It listens
// on 127.0.0.1 (an ephemeral port, printed first as {"port":N}), verifies
// each POST with the secret in WEBHOOK_SECRET, answers 204 when the
// delivery verifies and 400 otherwise, and prints one JSON line per
// request: {"id", "ok", "error", "first"} where first is false for a
// webhook-id it verified before (receivers dedupe on it).
import http from "node:http";
import { Webhook } from "standardwebhooks";

const wh = new Webhook(process.env.WEBHOOK_SECRET);
const seen = new Set();

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    const id = req.headers["webhook-id"] ?? "";
    let ok = true;
    let error = "";
    try {
      wh.verify(body, req.headers);
    } catch (e) {
      ok = false;
      error = String(e && e.message ? e.message : e);
    }
    const first = ok && !seen.has(id);
    if (ok) seen.add(id);
    process.stdout.write(JSON.stringify({ id, ok, error, first }) + "\n");
    res.writeHead(ok ? 204 : 400);
    res.end();
  });
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + "\n");
});
process.stdin.on("end", () => server.close(() => process.exit(0)));
process.stdin.resume();
