// What one call between a Worker and Durable Objects costs in local workerd (issue 12), by
// process CPU: a throwaway Worker and object make `--calls` calls per request of each kind
// below, and workerd's CPU (`/proc/<pid>/stat`, 10 ms ticks) is divided by the calls made.
// Kinds: an empty RPC; one carrying a 2,500-character string (a sub-batch of ~100 events);
// one whose method inserts that string as one SQLite row (a step that stores one row: the
// object's commit included); the same for 100 rows in one call (per row); a Worker → object →
// object call (the primary's forward); a Worker request that calls nothing; one-row commits
// made by 8 objects, called one after another and all at once (at P=4, R=2 eight replicas
// commit: does a commit cost more beside others, and do commits overlap in time?). With the state
// on disk (as `npm run bench` keeps it) and, if /dev/shm exists, on tmpfs beside it: the
// difference is what the disk adds to each commit. The least and the median of `--rounds`
// interleaved rounds (the machine is shared). Explains the per-call and per-step costs in
// docs/BENCHMARKS.md's analysis; nothing here is the product's code. The commit kinds also
// print wall time per call: locally every object shares one thread, so a commit's `fsync`
// that kept the thread waiting shows as wall time beyond its CPU.
// Run: npm run bench:calls [-- --calls 500] [--rounds 5]
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { removeDir, tempDir, workerdCpuSeconds } from "./harness.mjs";

const { values: args } = parseArgs({ options: { calls: { type: "string", default: "500" }, rounds: { type: "string", default: "5" } } });
const CALLS = Number(args.calls);
const ROUNDS = Number(args.rounds);

const WORKER = `
import { DurableObject } from "cloudflare:workers";
export class Target extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body TEXT)");
  }
  empty() { return 1; }
  take(s) { return s.length; }
  insert(s) { this.ctx.storage.sql.exec("INSERT INTO t (body) VALUES (?)", s); return 1; }
  insert100(s) { for (let i = 0; i < 100; i++) this.ctx.storage.sql.exec("INSERT INTO t (body) VALUES (?)", s); return 100; }
  forward(s) { return this.env.TARGET.getByName("standby").take(s); }
}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const kind = url.searchParams.get("kind");
    const calls = Number(url.searchParams.get("calls"));
    const s = "x".repeat(2500);
    if (kind === "request") return new Response("ok");
    if (kind === "insertSpread" || kind === "insertTogether") {
      const spread = Array.from({ length: 8 }, (_, i) => env.TARGET.getByName("spread-" + i));
      if (kind === "insertSpread") for (let i = 0; i < calls; i++) await spread[i % spread.length].insert(s);
      else await Promise.all(spread.map(async (o, k) => { for (let i = k; i < calls; i += spread.length) await o.insert(s); }));
      return new Response("ok");
    }
    const stub = env.TARGET.getByName("primary");
    for (let i = 0; i < calls; i++) {
      if (kind === "empty") await stub.empty();
      else if (kind === "take") await stub.take(s);
      else if (kind === "insert") await stub.insert(s);
      else if (kind === "insert100") await stub.insert100(s);
      else if (kind === "forward") await stub.forward(s);
    }
    return new Response("ok");
  },
};
`;

const KINDS = [
  { kind: "empty", what: "empty RPC, Worker → object", callsPer: 1 },
  { kind: "take", what: "RPC carrying 2,500 characters", callsPer: 1 },
  { kind: "insert", what: "RPC that inserts one row (its commit included)", callsPer: 1, wall: "one object" },
  { kind: "insertSpread", what: "the same, calls spread over 8 objects in turn", callsPer: 1, wall: "8 objects in turn" },
  { kind: "insertTogether", what: "the same, 8 objects called at once", callsPer: 1, wall: "8 objects at once" },
  { kind: "insert100", what: "per row, 100 rows inserted in one call", callsPer: 100, calls: (n) => Math.max(1, Math.floor(n / 10)) },
  { kind: "forward", what: "Worker → object → object, 2,500 characters", callsPer: 1 },
  { kind: "request", what: "Worker request that calls nothing (per request)", callsPer: 1, requests: (n) => n },
];

async function start(stateDir) {
  const scriptDir = tempDir("flux-call-costs-");
  const scriptPath = join(scriptDir, "worker.mjs");
  writeFileSync(scriptPath, WORKER);
  const mf = new Miniflare(
    // Module names are relative to modulesRoot (by default the working directory, which a path under /tmp is not under).
    convertV4MiniflareOptions({ modules: true, scriptPath, modulesRoot: scriptDir, compatibilityDate: "2026-08-01", durableObjects: { TARGET: { className: "Target", useSQLite: true } }, resourcePersistencePath: stateDir }),
  );
  const url = (await mf.ready).toString();
  return { url, stop: async () => { await mf.dispose(); removeDir(scriptDir); } };
}

/** Microseconds of workerd CPU and of wall time per call of `kind`, over `requests` requests. */
async function measure(url, { kind, callsPer, calls: callsOf, requests: requestsOf }) {
  const calls = callsOf ? callsOf(CALLS) : CALLS;
  const requests = requestsOf ? requestsOf(CALLS) : 10;
  const get = (n) => fetch(`${url}?kind=${kind}&calls=${n}`).then((r) => r.text());
  await get(Math.min(calls, 20));
  const cpu0 = workerdCpuSeconds();
  const started = performance.now();
  for (let r = 0; r < requests; r++) await get(calls);
  const wallMs = performance.now() - started;
  const cpu = workerdCpuSeconds() - cpu0;
  const made = kind === "request" ? requests : requests * calls * callsPer;
  return { cpu: (cpu * 1e6) / made, wall: (wallMs * 1e3) / made };
}

const places = [{ name: "disk", dir: tempDir("flux-call-costs-state-") }];
try {
  places.push({ name: "tmpfs", dir: mkdtempSync("/dev/shm/flux-call-costs-") });
} catch {
  // no /dev/shm: disk only
}
const results = new Map();
for (let round = 0; round < ROUNDS; round++) {
  for (const place of round % 2 === 0 ? places : [...places].reverse()) {
    const instance = await start(place.dir);
    try {
      for (const k of KINDS) {
        const id = `${place.name}|${k.kind}`;
        if (!results.has(id)) results.set(id, []);
        results.get(id).push(await measure(instance.url, k));
      }
    } finally {
      await instance.stop();
    }
  }
}
for (const place of places) removeDir(place.dir);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const row = (what, place, xs) => `| ${what} | ${place} | ${Math.min(...xs).toFixed(0)} | ${median(xs).toFixed(0)} |`;
console.log(`workerd CPU µs per call, least / median of ${ROUNDS} rounds (${CALLS} calls a request):`);
console.log("| call | state on | least µs | median µs |\n| --- | --- | --- | --- |");
for (const k of KINDS) {
  for (const place of places) console.log(row(k.what, place.name, results.get(`${place.name}|${k.kind}`).map((m) => m.cpu)));
}
console.log(`\nwall µs per one-row commit call, least / median of ${ROUNDS} rounds:`);
console.log("| commits made by | state on | least µs | median µs |\n| --- | --- | --- | --- |");
for (const k of KINDS.filter((kind) => kind.wall)) {
  for (const place of places) console.log(row(k.wall, place.name, results.get(`${place.name}|${k.kind}`).map((m) => m.wall)));
}
