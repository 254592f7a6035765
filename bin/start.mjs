#!/usr/bin/env node
// `npm start`: runs Flux locally on workerd (wrangler dev, offline), creates a demo
// dataflow and posts a trickle of demo events. Ctrl-C stops everything.
// Flags: --port N (default 8787), --no-load (no demo events).
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, readFileSync } from "node:fs";

const args = process.argv.slice(2);
const port = Number(args[args.indexOf("--port") + 1] || 8787) || 8787;
const withLoad = !args.includes("--no-load");

if (!existsSync(".dev.vars")) {
  copyFileSync(".dev.vars.example", ".dev.vars");
  console.log("created .dev.vars with development tokens (from .dev.vars.example)");
}
const devVars = readFileSync(".dev.vars", "utf8");
const token = /^FLUX_API_TOKEN=(.*)$/m.exec(devVars)?.[1]?.trim();
const adminToken = /^FLUX_ADMIN_TOKEN=(.*)$/m.exec(devVars)?.[1]?.trim();
if (!token || !adminToken) throw new Error(".dev.vars needs FLUX_API_TOKEN and FLUX_ADMIN_TOKEN (see .dev.vars.example)");

const base = `http://127.0.0.1:${port}`;
const wrangler = spawn(
  "wrangler",
  [
    "dev", "--local", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", ".wrangler/state",
    "--show-interactive-dev-session=false",
    // Locally the chaos endpoint is on, so fail-over can be watched (never in production).
    "--var", "FLUX_ENABLE_FAULTS:true",
  ],
  { stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" } },
);
const stop = () => {
  wrangler.kill("SIGTERM");
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
wrangler.on("exit", (code) => process.exit(code ?? 1));

const api = (method, path, body, headers = {}) =>
  fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function waitForServer() {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(base + "/")).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`wrangler dev did not answer on ${base} within 60 s`);
}

await waitForServer();
const spec = {
  stream: "clicks",
  key: "page",
  timeField: "ts",
  window: { kind: "tumbling", sizeMs: 10_000 },
  aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" }, avgBytes: { op: "avg", field: "bytes" } },
  partitions: 4,
  replication: 2,
};
const put = await api("PUT", "/v1/dataflows/clicks-per-page", spec);
if (put.status !== 200 && put.status !== 201) console.error("demo dataflow:", put.status, await put.text());
// A second dataflow on the same stream: sliding windows, approximate distinct users, top users by bytes,
// and clock ticks so windows close even when a partition goes quiet.
const usersSpec = {
  stream: "clicks",
  key: "page",
  timeField: "ts",
  window: { kind: "sliding", sizeMs: 30_000, slideMs: 10_000 },
  // Events without a user (like the README's first example) are left to the other dataflow.
  filter: { field: "user", op: "ne", value: null },
  aggregates: { users: { op: "distinct", field: "user" }, topUsers: { op: "topk", field: "user", k: 3, weight: "bytes" } },
  idleAdvanceMs: 2_000,
  partitions: 2,
};
const putUsers = await api("PUT", "/v1/dataflows/users-per-page", usersSpec);
if (putUsers.status !== 200 && putUsers.status !== 201) console.error("demo dataflow:", putUsers.status, await putUsers.text());

console.log(`
Flux is running on ${base} (workerd, state in .wrangler/state)
  dashboard: ${base}/dashboard   (paste the admin token ${adminToken} from .dev.vars into the page)
  token:   ${token}   (from .dev.vars)
  status:  curl -H 'authorization: Bearer ${token}' ${base}/v1/status
  results: curl -H 'authorization: Bearer ${token}' '${base}/v1/dataflows/clicks-per-page/results?key=home'
           curl -H 'authorization: Bearer ${token}' '${base}/v1/dataflows/users-per-page/results?key=home'
  live:    curl -N -H 'authorization: Bearer ${token}' '${base}/v1/dataflows/users-per-page/subscribe'
  post:    curl -H 'authorization: Bearer ${token}' -H 'flux-producer-id: me' -H 'flux-seq: 1' \\
             -H 'content-type: application/json' -d '[{"page":"home","user":"u1","ts":${Date.now()},"bytes":512}]' \\
             ${base}/v1/streams/clicks/events
  chaos:   curl -H 'authorization: Bearer ${adminToken}' -H 'content-type: application/json' -d '{"kind":"crash"}' \
             ${base}/v1/admin/replicas/clicks-per-page%2Fp0%2Fg0/fault     (then watch /v1/status; "heal" undoes it)
${withLoad ? "Posting demo events to stream 'clicks' every second (--no-load to stop that)." : ""}
`);

if (withLoad) {
  const producer = `demo-${Date.now()}`;
  const pages = ["home", "cart", "search", "product", "checkout"];
  // Like a real client: a batch that did not get a 200 is resent with the same seq.
  let seq = 0;
  let pending = null;
  setInterval(async () => {
    if (!pending) {
      seq += 1;
      const events = Array.from({ length: 20 }, () => ({
        page: pages[Math.floor(Math.random() * pages.length)],
        user: `u${Math.floor(Math.random() * 50)}`,
        ts: Date.now(),
        bytes: Math.floor(Math.random() * 4096),
      }));
      pending = { seq, events };
    }
    const batch = pending;
    try {
      const res = await api("POST", "/v1/streams/clicks/events", batch.events, { "flux-producer-id": producer, "flux-seq": String(batch.seq) });
      if (res.ok) pending = null;
      else console.error(`demo batch ${batch.seq}: ${res.status} ${await res.text()} (will resend)`);
    } catch (err) {
      console.error(`demo batch ${batch.seq}: ${err.message} (will resend)`);
    }
  }, 1000).unref();
}
