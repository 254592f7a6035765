#!/usr/bin/env node
// `npm start`: runs Flux locally on workerd (wrangler dev, offline), creates demo
// dataflows (and a second stage reading one of them) and posts a trickle of demo events. Ctrl-C stops everything. Per-request log
// lines are summarised every 10 s so the banner with the commands stays readable.
// Flags: --port N (default 8787), --no-load (no demo events).
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, readFileSync } from "node:fs";
import { createConnection } from "node:net";
import { createInterface } from "node:readline";

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

/** Whether something already listens on the port (a second `npm start`, say). */
function isPortBusy() {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
if (await isPortBusy()) {
  console.error(`port ${port} is already in use (another npm start?): stop that one, or run npm start -- --port ${port + 1}`);
  process.exit(1);
}

const wrangler = spawn(
  "wrangler",
  [
    "dev", "--local", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", ".wrangler/state",
    "--show-interactive-dev-session=false",
    // Locally the chaos endpoint is on, so fail-over can be watched (never in production).
    "--var", "FLUX_ENABLE_FAULTS:true",
  ],
  { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" } },
);

// wrangler logs one line per request; count them instead and print one summary line every 10 s.
const REQUEST_LINE = /^\[wrangler:info\] (GET|HEAD|POST|PUT|DELETE|PATCH|OPTIONS) (\S+?)(\?\S*)? (\d{3})/;
const counts = new Map();
for (const [from, to] of [[wrangler.stdout, process.stdout], [wrangler.stderr, process.stderr]]) {
  createInterface({ input: from }).on("line", (line) => {
    // wrangler colours its lines with ANSI escapes.
    const match = REQUEST_LINE.exec(line.replace(/\x1b\[[0-9;]*m/g, ""));
    if (!match) return to.write(`${line}\n`);
    const key = `${match[1]} ${match[2]} ${match[4]}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  });
}
setInterval(() => {
  if (counts.size === 0) return;
  const summary = [...counts].map(([key, n]) => `${key} ×${n}`).join(", ");
  counts.clear();
  console.log(`[last 10 s] ${summary}`);
}, 10_000).unref();
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
// A second stage (docs/PIPELINES.md): across both partitions of users-per-page, the three pages with the most
// distinct users in each of its windows, keyed by the window's start.
const topSpec = {
  from: "users-per-page",
  key: "windowStartMs",
  window: { kind: "tumbling", sizeMs: 10_000 },
  aggregates: { top: { op: "topk", field: "key", k: 3, weight: "values.users" }, pages: { op: "count" } },
  partitions: 1,
};
const putTop = await api("PUT", "/v1/dataflows/top-pages", topSpec);
if (putTop.status !== 200 && putTop.status !== 201) console.error("demo stage:", putTop.status, await putTop.text());

const portFlag = port === 8787 ? "" : ` --port ${port}`;
console.log(`
Flux is running on ${base} (workerd, state in .wrangler/state)
  dashboard: ${base}/dashboard   (paste the admin token ${adminToken} from .dev.vars into the page)
  token:   ${token}   (from .dev.vars; the admin token is ${adminToken})
  status:  curl -H 'authorization: Bearer ${token}' '${base}/v1/status?view=summary'    (full JSON: drop ?view=summary, add ?pretty=true)
  results: curl -H 'authorization: Bearer ${token}' '${base}/v1/dataflows/clicks-per-page/results?key=home'
           curl -H 'authorization: Bearer ${token}' '${base}/v1/dataflows/users-per-page/results?key=home'
           curl -H 'authorization: Bearer ${token}' '${base}/v1/dataflows/top-pages/results'    (a stage reading users-per-page)
  live:    curl -N -H 'authorization: Bearer ${token}' '${base}/v1/dataflows/users-per-page/subscribe'
  post:    curl -H 'authorization: Bearer ${token}' -H 'flux-producer-id: me' -H "flux-seq: $(date +%s)" \\
             -H 'content-type: application/json' -d "[{\\"page\\":\\"home\\",\\"user\\":\\"u1\\",\\"ts\\":$(date +%s000),\\"bytes\\":512}]" \\
             ${base}/v1/streams/clicks/events
           (the shell fills in the current time as ts, and as seq, so each paste is a new batch)
  chaos:   npm run chaos -- crash${portFlag}    (crashes whichever replica is primary of clicks-per-page p0 now;
           then watch the status; npm run chaos -- heal${portFlag} undoes it; also hang, slow, wipe, and [dataflow] [partition])
${withLoad ? "Posting 20 demo events to stream 'clicks' every second (--no-load to stop that). Request log lines are summarised every 10 s." : "Request log lines are summarised every 10 s."}
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
