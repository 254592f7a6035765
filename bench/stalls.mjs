// Stalls of the one workerd thread (issue 12): locally every object and the Worker share
// it, so while any object runs a long synchronous step no other request is served. A
// probe request that touches no object (GET /, a constant answer) is sent back to back; the
// longest one in a window is the longest stall in it (plus one request's own time). Not
// GET /v1/operators: that one builds every operator's JSON Schema per request, and sent back
// to back it took 7-12% of the thread while a 1M-key seed ran (CPU profile), load the
// ingest it is measured against did not have before the seed.
import { api } from "./harness.mjs";

/** Starts probing; `stop()` resolves to the samples `{ atMs, ms }` (start time, latency). */
export function stallProbe(url) {
  const samples = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const atMs = performance.now();
      const res = await fetch(`${url}/`);
      await res.arrayBuffer();
      samples.push({ atMs, ms: performance.now() - atMs });
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return samples;
    },
  };
}

/** The longest probe `{ atMs, ms }` that overlapped [fromMs, toMs] (null: none). */
export function longestProbe(samples, fromMs = -Infinity, toMs = Infinity) {
  return samples.filter((s) => s.atMs <= toMs && s.atMs + s.ms >= fromMs).reduce((max, s) => (max === null || s.ms > max.ms ? s : max), null);
}

const replicasOf = async (url, id) => {
  const status = await api(url, "GET", "/v1/status");
  return status.body.dataflows.find((d) => d.id === id).partitions[0].replicas;
};

/**
 * A checkpoint of the whole state, timed: after a fill, sends 2,000-event batches over
 * keys that already exist (the state does not grow) until both replicas have checkpointed
 * at or after the fill's last LSN, probing stalls meanwhile.
 * @returns the longest stall while they did, ms, and the LSNs involved.
 */
export async function checkpointStall(url, id, keys, log) {
  const [primary] = await replicasOf(url, id);
  const fillLsn = primary.lsn;
  const probe = stallProbe(url);
  let batches = 0;
  const startedAt = performance.now();
  for (let seq = 1; ; seq++) {
    const events = Array.from({ length: 2_000 }, (_, i) => ({ page: `k${(seq * 2_000 + i) % keys}`, ts: 1_000, bytes: 1 }));
    const res = await api(url, "POST", `/v1/streams/${id}/events`, events, { "flux-producer-id": "checkpoint", "flux-seq": String(seq) });
    if (res.status !== 200) throw new Error(`checkpoint load ${id}: ${res.status} ${JSON.stringify(res.body)}`);
    batches += 1;
    if (seq % 10 !== 0) continue;
    const replicas = await replicasOf(url, id);
    if (replicas.every((r) => r.checkpointLsn >= fillLsn)) {
      const samples = await probe.stop();
      const ms = performance.now() - startedAt;
      log(`  checkpointed at LSN ${replicas.map((r) => r.checkpointLsn).join(" and ")} (fill ended at ${fillLsn}) after ${batches} batches, ${Math.round(ms)} ms`);
      const longest = longestProbe(samples);
      return { keys, fillLsn, checkpointLsns: replicas.map((r) => r.checkpointLsn), batches, longestStallMs: longest?.ms ?? 0, longestStallAtMs: longest?.atMs ?? null, probes: samples.length };
    }
    if (batches > 2_000) {
      await probe.stop();
      throw new Error(`no checkpoint of ${id} after ${batches} batches`);
    }
  }
}
