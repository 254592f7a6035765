// Where workerd's CPU goes per event (issue 12, deliverable 3): a V8 CPU profile, taken over
// the Chrome DevTools Protocol (Miniflare's `inspectorPort`; Node's global WebSocket), of the
// product's isolate and of Miniflare's entry worker during a steady P=4, R=2 run. Self time is
// summed by function and by role: the stack's outermost product frame says whether a sample
// belongs to the router (functions/), a replica (by its entry method) or the monitor.
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { posix } from "node:path";
import { removeDir, startFlux, startPlain, tempDir, TOKEN, workerdCpuSeconds } from "./harness.mjs";
import { makeBatch, prng, runLoad } from "./load.mjs";
import { createDataflow, specFor } from "./scenarios.mjs";

const TOP = 15;
const SAMPLING_MICROS = 500;

export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A CDP session on one inspector target: `send(method, params)` resolves with the result. */
async function session(wsUrl) {
  const ws = new WebSocket(wsUrl);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = () => reject(new Error(`inspector: cannot connect to ${wsUrl}`));
  });
  let next = 1;
  const pending = new Map();
  ws.onmessage = (message) => {
    const data = JSON.parse(String(message.data));
    const waiter = pending.get(data.id);
    if (!waiter) return;
    pending.delete(data.id);
    if (data.error) waiter.reject(new Error(`${waiter.method}: ${data.error.message}`));
    else waiter.resolve(data.result);
  };
  return {
    send: (method, params = {}) =>
      new Promise((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve, reject, method });
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}

/**
 * Starts a CPU profile of the product isolate behind Miniflare's `inspectorPort`.
 * @returns `stop()`, resolving to the raw V8 profile.
 */
export async function startIsolateProfile(port, intervalUs = 1_000) {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  // Miniflare names the user worker's isolate "core:user:<name>"; the others are its own.
  const product = targets.find((t) => t.id.startsWith("core:user:"));
  if (!product) throw new Error(`inspector: no product isolate among ${targets.map((t) => t.id).join(", ")}`);
  const s = await session(product.webSocketDebuggerUrl);
  await s.send("Profiler.enable");
  await s.send("Profiler.setSamplingInterval", { interval: intervalUs });
  await s.send("Profiler.start");
  return {
    stop: async () => {
      const { profile } = await s.send("Profiler.stop");
      s.close();
      return profile;
    },
  };
}

/**
 * Maps a bundle line (0-based) to the source module esbuild put there (its `// path/to/module.ts`
 * comments), as a path from the project root; `base` is the folder the bundle's config sits in
 * (bench/plain for the plain baseline), which esbuild's paths are relative to.
 */
export function moduleMap(lines, base = ".") {
  const starts = [];
  lines.forEach((line, i) => {
    const m = /^\/\/ ((?:[\w@.+-]+\/)*[\w@.+-]+\.[cm]?[jt]s)$/.exec(line);
    // A symlinked node_modules shows up as a relative path that climbs out of the project.
    if (m) starts.push([i, m[1].includes("node_modules/") ? m[1].replace(/^.*?node_modules\//, "node_modules/") : posix.join(base, m[1])]);
  });
  return (lineNumber) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = "(bundle prelude)";
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid][0] <= lineNumber) {
        found = starts[mid][1];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

const ROUTER = /^(functions\/|shared\/router\/|shared\/ingest\/|node_modules\/hono\/|node_modules\/@hono\/|bench\/plain\/)/;
const MONITOR = /^(durable-objects\/coordinator\.ts|shared\/monitor\/)/;

/**
 * The role a stack (outermost frame first) works for: the outermost frame of a replica's or the
 * coordinator's entry method, or of the router's code; else the outermost product module
 * (code resumed after an await has no entry frame below it).
 */
function roleOf(stack) {
  for (const f of stack) {
    // The plain baseline (bench/plain/worker.ts): its object's one method, or its Worker (its HTTP front: below).
    if (f.module === "bench/plain/worker.ts") return f.source.startsWith("ingest(") ? "plain object: ingest" : "plain Worker";
    if (f.module === "durable-objects/partition-replica.ts") return `replica: ${f.functionName || "(anonymous)"}`;
    if (f.module === "durable-objects/coordinator.ts") return `monitor: ${f.functionName || "(anonymous)"}`;
    if (ROUTER.test(f.module)) return "router";
    if (MONITOR.test(f.module)) return "monitor";
  }
  // The baselines' shared HTTP front (bench/baseline/http.ts) is the plain Worker's own code.
  if (stack.some((f) => f.module === "bench/baseline/http.ts")) return "plain Worker";
  const product = stack.find((f) => f.module.includes("/") && !f.module.startsWith("node_modules/"));
  if (product) return `${product.module.startsWith("shared/replica/") ? "replica" : "other"}, resumed in ${product.module}`;
  const leaf = stack.at(-1);
  return leaf && leaf.module !== "(runtime)" ? `${leaf.functionName || "(native)"}` : "runtime JS";
}

/**
 * What kind of work a sample's own frame did (issue 12, deliverable 3): SQLite, the cost of
 * object calls (stubs, argument serialization, deadlines), JSON and validation, the operator,
 * the router's HTTP work, the runtime outside JS, or other product code.
 */
const KINDS = [
  ["SQLite (exec, transactions, cursors)", (f) => ["exec", "transactionSync", "toArray"].includes(f.functionName) || /^(platform\/counted-sql|durable-objects\/(sql-replica-storage|replica-meta-log|replica-layout))\.ts$/.test(f.module)],
  // The plain baseline calls its objects from one arrow in its Worker (`[...byPartition].map(([p, records]) => … .ingest(records))`,
  // V8 naming a function by its first line): its self time is those calls'.
  ["object calls (stubs, argument serialization, deadlines)", (f) => ["getByName", "setTimeout", "clearTimeout"].includes(f.functionName) || /^platform\/(object-calls|deadline-timer|replica-ports)\.ts$/.test(f.module) || (f.module === "bench/plain/worker.ts" && f.source.startsWith("[...byPartition].map("))],
  ["JSON and validation (parse, stringify, zod)", (f) => ["parse", "stringify", "json"].includes(f.functionName) || /^(node_modules\/zod\/|shared\/wire\/|shared\/checkpoint\/)/.test(f.module) || /^parse|Records$/.test(f.functionName)],
  ["operator (aggregation, windows)", (f) => f.module.startsWith("shared/operators/")],
  ["router and HTTP (Hono, routing, answers)", (f) => f.functionName === "Response" || ROUTER.test(f.module)],
  ["runtime outside JS ((program), GC)", (f) => ["(program)", "(garbage collector)"].includes(f.functionName)],
];
const kindOf = (frame) => KINDS.find(([, test]) => test(frame))?.[0] ?? "other";

/** Self time by function and by role, per event, from one `Profiler.stop` result. */
function summarizeProfile(profile, moduleOf, bundleUrlPart, events, sourceLine) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const frameOf = (n) => {
    const { functionName, url, lineNumber } = n.callFrame;
    const inBundle = url.includes(bundleUrlPart);
    return { functionName, module: inBundle ? moduleOf(lineNumber) : url ? "(runtime)" : "", line: lineNumber + 1, url, source: inBundle ? sourceLine(lineNumber + 1) : "" };
  };
  const functions = new Map();
  const roles = new Map();
  const kinds = new Map();
  let busyUs = 0;
  let idleUs = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i + 1] ?? 0;
    const node = byId.get(id);
    const frame = frameOf(node);
    if (frame.functionName === "(idle)") {
      idleUs += us;
      return;
    }
    busyUs += us;
    const stack = [];
    for (let n = node; n; n = byId.get(parent.get(n.id))) if (n.callFrame.functionName !== "(root)") stack.unshift(frameOf(n));
    const role = roleOf(stack);
    roles.set(role, (roles.get(role) ?? 0) + us);
    const kind = kindOf(frame);
    kinds.set(kind, (kinds.get(kind) ?? 0) + us);
    const key = `${frame.functionName || "(anonymous)"} ${frame.module}${frame.module.includes("/") ? `:${frame.line}` : ""}`;
    const where = frame.module.includes("/") ? `${frame.module}:${frame.line}` : frame.module || "(native)";
    const entry = functions.get(key) ?? { function: frame.functionName || "(anonymous)", where, source: frame.url.includes(bundleUrlPart) ? sourceLine(frame.line) : "", us: 0, roles: new Map() };
    entry.us += us;
    entry.roles.set(role, (entry.roles.get(role) ?? 0) + us);
    functions.set(key, entry);
  });
  const perEvent = (us) => us / events;
  const top = [...functions.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, TOP)
    .map((f) => ({ function: f.function, where: f.where, source: f.source, selfMs: f.us / 1000, microsPerEvent: perEvent(f.us), share: f.us / busyUs, mostlyFor: [...f.roles].sort((a, b) => b[1] - a[1])[0][0] }));
  const roleRows = [...roles].sort((a, b) => b[1] - a[1]).map(([role, us]) => ({ role, selfMs: us / 1000, microsPerEvent: perEvent(us), share: us / busyUs }));
  const kindRows = [...kinds].sort((a, b) => b[1] - a[1]).map(([kind, us]) => ({ kind, microsPerEvent: perEvent(us), share: us / busyUs }));
  return { busyMs: busyUs / 1000, idleMs: idleUs / 1000, busyMicrosPerEvent: perEvent(busyUs), top, roles: roleRows, kinds: kindRows };
}

/**
 * Profiles a steady run of `durationMs` at `partitions` (P=4 by default) and `replication` (R=2 by
 * default; R=1 beside it shows what the standby adds) in a fresh workerd; with `cpuprofilePath`,
 * also writes the raw V8 profile there (opens in Chrome DevTools). `plain: true` profiles the plain
 * baseline's bundle (`scriptPath` then being bench/plain's) under the same load instead, so that
 * the product's profile can be read against work every design pays (`replication` is then null).
 */
export async function profileScenario(scriptPath, durationMs, log, { partitions = 4, replication = 2, cpuprofilePath = null, plain = false } = {}) {
  const port = await freePort();
  const persist = tempDir("flux-bench-profile-");
  const flux = plain ? await startPlain(scriptPath, persist, { inspectorPort: port }) : await startFlux(scriptPath, persist, {}, { inspectorPort: port });
  try {
    const id = plain ? `plain-p${partitions}` : `profile-p${partitions}-r${replication}`;
    if (!plain) await createDataflow(flux.url, id, specFor(id, partitions, replication));
    const path = plain ? `/v1/streams/${id}/events?partitions=${partitions}` : undefined;
    const random = prng(4242);
    const load = (ms, prefix) => {
      const stopAt = performance.now() + ms;
      return runLoad({ url: flux.url, token: TOKEN, stream: id, path, concurrency: 8, producerPrefix: prefix, stopAt: () => performance.now() >= stopAt, nextBatch: () => makeBatch(random, 100, 10_000, 1_000) });
    };
    await load(1_000, `${id}-warm`);
    const profiler = await startIsolateProfile(port, SAMPLING_MICROS);
    const cpu0 = workerdCpuSeconds(flux.pid);
    const started = performance.now();
    const { acks } = await load(durationMs, id);
    const elapsedMs = performance.now() - started;
    const cpuSeconds = workerdCpuSeconds(flux.pid) - cpu0;
    const events = acks.reduce((n, a) => n + a.events, 0);
    const profile = await profiler.stop();
    if (cpuprofilePath) writeFileSync(cpuprofilePath, JSON.stringify(profile));
    const lines = readFileSync(scriptPath, "utf8").split("\n");
    const sourceLine = (line) => (lines[line - 1] ?? "").trim().slice(0, 90);
    const summary = summarizeProfile(profile, moduleMap(lines, plain ? "bench/plain" : "."), scriptPath.split("/").at(-1), events, sourceLine);
    const workerdCpuMicrosPerEvent = (cpuSeconds * 1e6) / events;
    log(`  ${events} events in ${(elapsedMs / 1000).toFixed(1)} s; workerd ${workerdCpuMicrosPerEvent.toFixed(1)} µs CPU/event; sampled busy ${summary.busyMicrosPerEvent.toFixed(1)} µs/event`);
    for (const r of summary.roles.slice(0, 6)) log(`    ${r.role}: ${(r.share * 100).toFixed(1)}% (${r.microsPerEvent.toFixed(1)} µs/event sampled)`);
    for (const k of summary.kinds) log(`    kind: ${k.kind}: ${(k.share * 100).toFixed(1)}%`);
    return { takenAt: new Date().toISOString(), design: plain ? "plain" : "flux", partitions, replication: plain ? null : replication, durationMs: elapsedMs, events, eventsPerSecond: events / (elapsedMs / 1000), workerdCpuMicrosPerEvent, samplingIntervalMicros: SAMPLING_MICROS, ...summary };
  } finally {
    await flux.stop();
    removeDir(persist);
  }
}
