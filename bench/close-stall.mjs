// A close of one large window, end to end in workerd (issue 12, deliverable 4): one
// partition at R=2 fills `keys` keys into one window, then one event past its end closes
// it. Reports how long that write took, how long until both replicas numbered every result
// (a large close goes on over several steps after the write is answered), the longest stall of the thread meanwhile (a
// probe touching no object, `stalls.mjs`), the outputs each replica numbered, and what
// the monitor did (events, epoch) over the next seconds. First it times three pages of
// open results (1,000 each) of that window.
// Usage: node bench/close-stall.mjs [keys=100000] [git ref to compare against]
// (`--steps`: the operator's close steps in Node instead, `close-steps.mjs`).
import { api, buildBundle, buildRefBundle, removeDir, startFlux, tempDir } from "./harness.mjs";
import { createDataflow } from "./scenarios.mjs";
import { longestProbe, stallProbe } from "./stalls.mjs";

if (process.argv.includes("--steps")) {
  await import("./close-steps.mjs");
  process.exit(0);
}

const keys = Number(process.argv[2] ?? 100_000);
const ref = process.argv[3];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function post(url, id, events, seq) {
  const startedAt = performance.now();
  const res = await api(url, "POST", `/v1/streams/${id}/events`, events, { "flux-producer-id": "fill", "flux-seq": String(seq) });
  if (res.status !== 200) throw new Error(`post ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return performance.now() - startedAt;
}

async function closeOnce(bundle, label) {
  const dir = tempDir("flux-close-");
  const flux = await startFlux(bundle, dir);
  try {
    const id = "close";
    const spec = { stream: id, key: "page", timeField: "ts", window: { kind: "tumbling", sizeMs: 60_000, allowedLatenessMs: 0 }, aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" } }, partitions: 1, replication: 2 };
    await createDataflow(flux.url, id, spec);
    let seq = 1;
    for (let from = 0; from < keys; from += 20_000, seq++) {
      await post(flux.url, id, Array.from({ length: Math.min(20_000, keys - from) }, (_, i) => ({ page: `k${from + i}`, ts: 1_000, bytes: 1 })), seq);
    }
    const pageMs = [];
    let cursor = null;
    for (let page = 0; page < 3; page++) {
      const startedAt = performance.now();
      const res = await api(flux.url, "GET", `/v1/dataflows/${id}/results?limit=1000${cursor ? `&after=${encodeURIComponent(cursor)}` : ""}`);
      if (res.status !== 200 || res.body.results.length !== 1000) throw new Error(`results page ${page}: ${res.status}`);
      pageMs.push(Math.round(performance.now() - startedAt));
      cursor = res.body.next;
    }
    const before = (await api(flux.url, "GET", "/v1/status")).body.dataflows.find((d) => d.id === id);
    await sleep(2_000);
    const probe = stallProbe(flux.url);
    await sleep(200);
    const closeStartedAt = performance.now();
    const closeMs = await post(flux.url, id, [{ page: "k0", ts: 61_000, bytes: 1 }], seq);
    // A close spread over steps (issue 12) goes on after the write is answered: wait until both replicas numbered every result.
    const numbered = async () => (await api(flux.url, "GET", "/v1/status")).body.dataflows.find((d) => d.id === id).partitions[0].replicas.map((r) => r.outputSeq);
    while ((await numbered()).some((n) => n < keys) && performance.now() - closeStartedAt < 600_000) await sleep(100);
    const closeDoneMs = performance.now() - closeStartedAt;
    await sleep(5_000);
    const samples = await probe.stop();
    const after = (await api(flux.url, "GET", "/v1/status")).body.dataflows.find((d) => d.id === id);
    const events = after.events.filter((e) => !before.events.some((b) => b.at === e.at && b.kind === e.kind)).map((e) => `${e.kind}: ${e.detail}`);
    const replicas = after.partitions[0].replicas.map((r) => `${r.name} ${r.role} epoch ${r.epoch} outputSeq ${r.outputSeq}`);
    console.log(JSON.stringify({ label, keys, openResultPagesMs: pageMs, closeWriteMs: Math.round(closeMs), closeDoneMs: Math.round(closeDoneMs), longestStallMs: Math.round(longestProbe(samples)?.ms ?? 0), epochBefore: before.partitions[0].replicas[0]?.epoch, replicas, monitorEvents: events }, null, 1));
  } finally {
    await flux.stop();
    removeDir(dir);
  }
}

if (ref) await closeOnce(buildRefBundle(ref).path, `before (${ref})`);
await closeOnce(buildBundle(), "this tree");
