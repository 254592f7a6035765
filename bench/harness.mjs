// Runs worker bundles in local workerd through the Miniflare API, and the helpers the
// scenarios use to drive them: HTTP calls, fault injection, cost counters, CPU accounting.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";

export const TOKEN = "bench-token";
const ADMIN_TOKEN = "bench-admin-token";
/** Each built bundle's Durable Object bindings, as its wrangler config declares them. */
const objectsOfBundle = new Map();

/** `{ BINDING: { className, useSQLite } }` from a wrangler.toml's `[[durable_objects.bindings]]` and migrations. */
function durableObjectsOf(config) {
  const toml = readFileSync(config, "utf8");
  const sqlite = new Set([...toml.matchAll(/new_sqlite_classes\s*=\s*\[([^\]]*)\]/g)].flatMap((m) => [...m[1].matchAll(/"([^"]+)"/g)].map((c) => c[1])));
  const objects = {};
  for (const block of toml.split(/^\[/m).filter((b) => b.startsWith("[durable_objects.bindings]]"))) {
    const name = /^name\s*=\s*"([^"]+)"/m.exec(block)?.[1];
    const className = /^class_name\s*=\s*"([^"]+)"/m.exec(block)?.[1];
    if (name && className) objects[name] = { className, useSQLite: sqlite.has(className) };
  }
  return objects;
}

/**
 * Bundles a Worker exactly as `wrangler deploy` would, without uploading it: the product
 * (`wrangler.toml`) or one of the bench's own workers (`bench/<name>/wrangler.toml`).
 * @returns the bundle's path, relative: workerd refuses module paths that climb out of the working directory.
 */
export function buildBundle(config = "wrangler.toml", name = "flux") {
  const outdir = join(".bench-build", name);
  rmSync(outdir, { recursive: true, force: true });
  // Absolute: wrangler resolves --outdir against the config's folder.
  execFileSync("wrangler", ["deploy", "--dry-run", "--config", config, "--outdir", join(process.cwd(), outdir)], {
    stdio: "pipe",
    env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" },
  });
  const main = readdirSync(outdir).find((f) => f.endsWith(".js"));
  if (!main) throw new Error(`wrangler wrote no bundle for ${config}`);
  objectsOfBundle.set(join(outdir, main), durableObjectsOf(config));
  return join(outdir, main);
}

/**
 * Bundles the product as it was at git `ref` (its own wrangler.toml, or `config` of it such
 * as its traced build's, today's node_modules): the "before" of a side-by-side comparison in one run.
 */
export function buildRefBundle(ref, config = "wrangler.toml", name = "before") {
  const src = join(".bench-build", "before-src");
  rmSync(src, { recursive: true, force: true });
  mkdirSync(src, { recursive: true });
  const tar = join(".bench-build", "before.tar");
  execFileSync("git", ["archive", "--format=tar", "-o", tar, ref], { stdio: "pipe" });
  execFileSync("tar", ["-xf", tar, "-C", src], { stdio: "pipe" });
  const commit = execFileSync("git", ["rev-parse", "--short", `${ref}^{commit}`], { encoding: "utf8" }).trim();
  return { path: buildBundle(join(src, config), name), commit };
}

/** Pids of the workerd processes this process started. */
function workerdPids() {
  const pids = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    const stat = procStat(pid);
    if (stat && stat.name === "workerd" && stat.ppid === process.pid) pids.push(Number(pid));
  }
  return pids;
}

function procStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null; // the process went away
  }
}

/**
 * Starts workerd with a bundle; state persists under `persistPath` so a restart keeps it.
 * @returns `{ mf, url, pid, stop }`, `pid` being this instance's workerd process (for its CPU time).
 */
async function startWorker(scriptPath, persistPath, { vars = {}, inspectorPort, onRuntimeLine } = {}) {
  const durableObjects = objectsOfBundle.get(scriptPath);
  if (!durableObjects) throw new Error(`${scriptPath} was not built by buildBundle in this process`);
  const before = new Set(workerdPids());
  // Miniflare 5 takes config-shaped options; convertV4MiniflareOptions accepts the classic shape.
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      modules: true,
      scriptPath,
      compatibilityDate: "2026-08-01",
      resourcePersistencePath: persistPath,
      durableObjects,
      inspectorPort,
      // workerd's own output lines (V8's `--trace-gc`, say), when asked for; else Miniflare prints them.
      ...(onRuntimeLine ? { handleStructuredLogs: (log) => onRuntimeLine(log.message) } : {}),
      bindings: { FLUX_API_TOKEN: TOKEN, FLUX_ADMIN_TOKEN: ADMIN_TOKEN, FLUX_ENABLE_FAULTS: "true", FLUX_MAX_BATCH_EVENTS: "20000", FLUX_MAX_BODY_BYTES: "8388608", ...vars },
    }),
  );
  const url = (await mf.ready).toString().replace(/\/$/, "");
  const fresh = workerdPids().filter((pid) => !before.has(pid));
  if (fresh.length !== 1) throw new Error(`expected one new workerd process, found ${fresh.length}`);
  let stopped = null;
  // `stop` may be called again (a finally after a normal stop): it disposes once.
  return { mf, url, pid: fresh[0], stop: () => (stopped ??= mf.dispose()) };
}

/**
 * The product's bundle (or the traced or an earlier one) in workerd. `options`: `inspectorPort`
 * (V8 inspector), `onRuntimeLine(line)` (workerd's output, e.g. with MINIFLARE_WORKERD_V8_FLAGS=--trace-gc).
 */
export function startFlux(scriptPath, persistPath, vars = {}, options = {}) {
  return startWorker(scriptPath, persistPath, { ...options, vars });
}

/** The plain baseline's bundle (bench/plain) in workerd; `options` as for {@link startFlux}. */
export function startPlain(scriptPath, persistPath, options = {}) {
  return startWorker(scriptPath, persistPath, options);
}

export function tempDir(prefix) {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(path) {
  rmSync(path, { recursive: true, force: true });
}

/**
 * A JSON call to the API with the bench token. A GET whose pooled connection the server had
 * closed while it sat idle ("other side closed", seen once after a long pause in a full run)
 * is sent once more on a fresh one: it changes nothing, and a server that is down fails again.
 */
export async function api(url, method, path, body, headers = {}) {
  const send = () =>
    fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
  const res = await send().catch((err) => {
    if (method !== "GET" || err?.cause?.code !== "UND_ERR_SOCKET") throw err;
    return send();
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

export async function injectFault(url, replica, kind) {
  const res = await fetch(`${url}/v1/admin/replicas/${encodeURIComponent(replica)}/fault`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ kind }),
  });
  if (res.status !== 200) throw new Error(`fault ${kind} on ${replica}: ${res.status} ${await res.text()}`);
}

/**
 * `GET /v1/admin/counters` (issue 12): `{ calls: {method: n}, callsTotal, rowsRead, rowsWritten,
 * workerRequests }` for the isolate, or null where the endpoint does not exist yet.
 */
export async function readCounters(url) {
  const res = await fetch(`${url}/v1/admin/counters`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const text = await res.text();
  if (res.status === 404) return null;
  if (res.status !== 200) throw new Error(`counters: ${res.status} ${text}`);
  const body = JSON.parse(text);
  for (const field of ["callsTotal", "rowsRead", "rowsWritten", "workerRequests"]) {
    if (!Number.isInteger(body[field])) throw new Error(`counters: ${field} is not an integer in ${text}`);
  }
  return body;
}

/** CPU seconds (user + system) used so far by one workerd process, or by all this process started. */
export function workerdCpuSeconds(pid) {
  const ticksPerSecond = 100;
  const pids = pid === undefined ? workerdPids() : [pid];
  return pids.reduce((sum, p) => sum + (procStat(p)?.ticks ?? 0), 0) / ticksPerSecond;
}

/** CPU seconds this Node process used. */
export function selfCpuSeconds() {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}
