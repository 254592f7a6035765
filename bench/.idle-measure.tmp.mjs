// One-off: workerd CPU while one P=4 R=2 dataflow sits idle (run from a worktree root).
import { api, buildBundle, removeDir, startFlux, tempDir, workerdCpuSeconds } from "./bench/harness.mjs";
const waitMs = Number(process.argv[2] ?? "180000");
const script = buildBundle();
const persist = tempDir("flux-idle-measure-");
const flux = await startFlux(script, persist);
const spec = { stream: "idle", key: "page", timeField: "ts", window: { kind: "tumbling", sizeMs: 60000 }, aggregates: { n: { op: "count" } }, partitions: 4, replication: 2 };
console.log((await api(flux.url, "PUT", "/v1/dataflows/idle", spec)).status);
const events = Array.from({ length: 100 }, (_, i) => ({ page: `p${i}`, ts: 1000 }));
console.log((await api(flux.url, "POST", "/v1/streams/idle/events", events, { "flux-producer-id": "x", "flux-seq": "1" })).status);
await new Promise((r) => setTimeout(r, 15000));
const cpu0 = workerdCpuSeconds();
const t0 = performance.now();
await new Promise((r) => setTimeout(r, waitMs));
const cpu1 = workerdCpuSeconds();
const status = await api(flux.url, "GET", "/v1/status");
console.log(JSON.stringify({ idleSeconds: (performance.now() - t0) / 1000, workerdCpuSeconds: cpu1 - cpu0, cpuMsPerIdleHour: ((cpu1 - cpu0) * 1000 * 3600000) / (performance.now() - t0), lastHeartbeats: status.body.dataflows[0].partitions.flatMap((p) => p.replicas.map((r) => r.lastHeartbeat)) }));
await flux.mf.dispose();
removeDir(persist);
