// Runs the real worker bundle in local workerd through the Miniflare API, and the
// helpers the scenarios use to drive it: HTTP calls, fault injection, CPU accounting.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";

export const TOKEN = "bench-token";
const ADMIN_TOKEN = "bench-admin-token";

/** Bundles the Worker exactly as `wrangler deploy` would, without uploading it. */
export function buildBundle() {
  // Inside the project: workerd refuses module paths that climb out of the working directory.
  const outdir = ".bench-build";
  rmSync(outdir, { recursive: true, force: true });
  execFileSync("wrangler", ["deploy", "--dry-run", "--outdir", outdir], {
    stdio: "pipe",
    env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" },
  });
  return join(outdir, "index.js");
}

/** Starts workerd with the bundle; state persists under `persistPath` so a restart keeps it. */
export async function startFlux(scriptPath, persistPath, vars = {}) {
  // Miniflare 5 takes config-shaped options; convertV4MiniflareOptions accepts the classic shape.
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      modules: true,
      scriptPath,
      compatibilityDate: "2026-08-01",
      resourcePersistencePath: persistPath,
      durableObjects: {
        PARTITION_REPLICA: { className: "PartitionReplica", useSQLite: true },
        COORDINATOR: { className: "Coordinator", useSQLite: true },
        INGEST_STATS: { className: "IngestStats", useSQLite: true },
      },
      bindings: { FLUX_API_TOKEN: TOKEN, FLUX_ADMIN_TOKEN: ADMIN_TOKEN, FLUX_ENABLE_FAULTS: "true", FLUX_MAX_BATCH_EVENTS: "20000", FLUX_MAX_BODY_BYTES: "8388608", ...vars },
    }),
  );
  const url = (await mf.ready).toString().replace(/\/$/, "");
  return { mf, url };
}

export function tempDir(prefix) {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(path) {
  rmSync(path, { recursive: true, force: true });
}

/** A JSON call to the API with the bench token. */
export async function api(url, method, path, body, headers = {}) {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
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

/** CPU seconds (user + system) used so far by every workerd process this process started. */
export function workerdCpuSeconds() {
  const ticksPerSecond = 100;
  let ticks = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      if (name === "workerd" && Number(fields[1]) === process.pid) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // the process went away
    }
  }
  return ticks / ticksPerSecond;
}

/** CPU seconds this Node process used. */
export function selfCpuSeconds() {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}
