// "What limits the misses": the reading of one run, from its own counted numbers (calls and
// rows per batch, CPU per event, the profile's shares), so it stays true when the code changes.
import { cell, fmt, pct, roundRatios } from "./report-cost.mjs";

const perBatch = (c, field) => (c?.counters ? c.counters[field] / c.batches : NaN);

function workPerBatch(results, partitions) {
  return ["Flux R=1", "Flux R=2", "plain", "simple"]
    .filter((label) => cell(results, label, partitions))
    .map((label) => {
      const c = cell(results, label, partitions);
      return `${label} ${fmt(perBatch(c, "callsTotal"), 1)} calls and ${fmt(perBatch(c, "rowsWritten"), 1)} rows written`;
    })
    .join("; ");
}

function priceShare(c) {
  const u = c?.cost?.usdPerMillion;
  if (!u) return "counters unavailable";
  const lines = [
    ["rows written", u.rowsWritten],
    ["DO calls", u.calls],
    ["Worker requests", u.workerRequests],
    ["CPU", u.cpu],
    ["rows read", u.rowsRead],
  ].sort((a, b) => b[1] - a[1]);
  return lines.map(([name, v]) => `${name} ${pct(v / u.total)}`).join(", ");
}

function batchSizes(results) {
  return ["Flux R=1", "Flux R=2", "plain", "simple"]
    .filter((label) => cell(results, label, 4))
    .map((label) => `${label} ${[10, 100, 1000].map((b) => fmt(cell(results, label, 4, b)?.cpuMicrosPerEvent, 1)).join(" / ")}`)
    .join("; ");
}

/**
 * Why R=2 at P=16 cannot reach 0.7 × P=1 locally by merging alone: 8 producers can merge at most 8
 * sub-batches of one partition into a call, so each batch costs at least P/8 write calls and as
 * many forwards; each is at least an object call that commits a row, which `npm run bench:calls`
 * measured at 233–280 µs of CPU on 2026-12-01 and 204–206 on 2026-12-03 (state on disk). The floor assumes the lower figure
 * and nothing else paid per sub-batch.
 */
const CALL_WITH_COMMIT_US = 204;
function partitionFloor(results) {
  const p1 = cell(results, "Flux R=2", 1);
  const p16 = cell(results, "Flux R=2", 16);
  const calls1 = perBatch(p1, "callsTotal");
  const calls16 = perBatch(p16, "callsTotal");
  if (!Number.isFinite(calls1) || !Number.isFinite(calls16)) return "";
  const minCalls = 2 * (16 / 8);
  const batch1 = p1.cpuMicrosPerEvent * 100;
  const floor = batch1 + (minCalls - calls1) * CALL_WITH_COMMIT_US;
  const perExtraCall = (p16.cpuMicrosPerEvent * 100 - batch1) / (calls16 - calls1);
  return `A floor for P16/P1: with 8 producers a call can carry at most 8 sub-batches of one partition, so at
  P=16 each batch costs at least ${minCalls} calls (2 writes and 2 forwards), against ${fmt(calls1, 2)} at P=1 in this run (${fmt(calls16, 1)} at P=16). Each is at
  least an object call that commits a row, ${CALL_WITH_COMMIT_US}–280 µs of CPU (\`npm run bench:calls\`: 233–280 on 2026-12-01, 204–206 on 2026-12-03). With
  perfect merging and nothing else paid per sub-batch, a P=16 batch would still cost ${fmt(floor, 0)} µs of CPU against ${fmt(batch1, 0)} at P=1:
  a ratio of at most ${fmt(batch1 / floor, 2)} at equal core share. This run paid ${fmt(perExtraCall, 0)} µs of CPU per call beyond P=1's. ${p16Profile(results)}`;
}

/** Where the sampled CPU per event grows from P=4 to P=16 (R=2), by role, from this run's two profiles. */
function p16Profile(results) {
  const p4 = results.profile;
  const p16 = results.profileP16;
  if (!p4 || !p16) return "";
  const of = (profile, role) => profile.roles.find((r) => r.role === role)?.microsPerEvent ?? 0;
  const roles = p16.roles.slice(0, 6).map((r) => r.role);
  const growth = roles.map((role) => `${role} ${fmt(of(p4, role), 1)} → ${fmt(of(p16, role), 1)}`).join(", ");
  const top = p16.top
    .filter((f) => f.where.includes("/") || !f.function.startsWith("("))
    .slice(0, 4)
    .map((f) => `\`${f.function}\` (${fmt(f.microsPerEvent, 1)} µs, for ${f.mostlyFor})`)
    .join(", ");
  return `The V8 profile of a P=16 run (R=2, same load, ${fmt(p16.busyMicrosPerEvent, 1)} µs of sampled CPU per event against
  ${fmt(p4.busyMicrosPerEvent, 1)} at P=4) says where the growth goes, by role, P=4 → P=16 in sampled µs per event: ${growth}; its
  heaviest functions are ${top}. A batch reaches all 16 partitions at P=16 against 4 at P=4, so whatever is paid per call or
  per sub-batch is paid four times as often per event.`;
}

/** " (rounds least–most)" of the same-round ratios of `a` to `b`, or "" with fewer than two rounds. */
function roundsRange(a, b) {
  const xs = roundRatios(a, b);
  return xs.length > 1 ? ` (rounds ${fmt(Math.min(...xs), 2)}–${fmt(Math.max(...xs), 2)})` : "";
}

/** Flux R=2 against plain at P=4 in this run: the median rounds' ratio, each round's, and their CPU per event. */
function p4Rounds(results) {
  const r2 = cell(results, "Flux R=2", 4);
  const plain = cell(results, "plain", 4);
  if (!r2 || !plain) return "this run has no P=4 cells.";
  return `this run gave ${fmt(r2.eventsPerSecond / plain.eventsPerSecond, 2)}${roundsRange(r2, plain)}, with ${fmt(r2.cpuMicrosPerEvent, 1)} and ${fmt(plain.cpuMicrosPerEvent, 1)} µs.`;
}

/** Sampled CPU per event by role in this run's two profiles: the product's router and replicas against the plain Worker and objects. */
function roleSentence(results) {
  const us = (profile, test) => profile?.roles.filter((r) => test(r.role)).reduce((sum, r) => sum + r.microsPerEvent, 0);
  const router = us(results.profile, (role) => role === "router");
  const replicas = us(results.profile, (role) => role.startsWith("replica"));
  const worker = us(results.plainProfile, (role) => role === "plain Worker");
  const objects = us(results.plainProfile, (role) => role.startsWith("plain object"));
  if (router === undefined || worker === undefined) return "This run took no profiles.";
  return `In this run's profiles (above), the router took ${fmt(router, 1)} µs of sampled CPU per event against the plain
  Worker's ${fmt(worker, 1)}, and the replicas together ${fmt(replicas, 1)} against the plain objects' ${fmt(objects, 1)}.`;
}

/** The router's cuts of 2026-12-03 and what they measured (hand-written: they compare builds, which one run cannot). */
const ROUTER_CUTS = `On 2026-12-03 the router's own work was cut where the profiles showed it: valid producer
  headers and stream names are told by their patterns without zod (the schemas still answer
  the invalid ones, and a test checks both accept the same), the long-lived token is compared
  without a SHA-256 promise (in time that depends only on the offered token's length), a POST's
  body limit is judged by its \`Content-Length\`, there are five fewer middleware layers,
  and path segments are decoded only when they hold a \`%\`. Under the profiler, the two builds
  alternated over four \`--profile\` runs, workerd's CPU per event fell from 29.1–31.7 µs to
  22.9–27.6. Without it the change is within the noise: \`--cells --partitions 4 --rounds 5
  --before 8398489\` gave Flux R=2 27,691 against 28,114 events/s (26.4 against 26.1 µs per
  event; rounds 22,599–33,656 against 26,396–29,738), and ten alternating one-producer rounds
  8,373 against 8,351 events/s. The profiler inflates calls and promises, which is what the
  cuts removed, so its shares say where the CPU goes, not how much a cut will save.`;

/** The P=4 cells of this run again with the state on tmpfs (\`bench/tmpfs-cells.mjs\`), beside the ones on disk. */
function tmpfsSentence(results) {
  const onTmpfs = (label) => results.tmpfs?.matrix.find((c) => c.label === label);
  const [r1, r2, plain] = ["Flux R=1", "Flux R=2", "plain"].map(onTmpfs);
  if (!r1 || !r2 || !plain) return "The P=4 cells with the state on tmpfs were not measured in this run.";
  const [d1, d2, dPlain] = ["Flux R=1", "Flux R=2", "plain"].map((label) => cell(results, label, 4));
  const cpu = (c) => `${fmt(c.eventsPerSecond)} events/s at ${fmt(c.cpuMicrosPerEvent, 1)} µs of CPU per event`;
  const ratio = (a, b) => fmt(a.eventsPerSecond / b.eventsPerSecond, 2);
  return `The same run measured the P=4 cells again with the state on tmpfs (median rounds of
  ${r2.rounds?.length ?? 1}, each design in a fresh workerd): plain ${cpu(plain)}, Flux R=2 ${cpu(r2)}, Flux R=1
  ${cpu(r1)}. R=2/R=1 is ${ratio(r2, r1)} there against ${d1 && d2 ? ratio(d2, d1) : "n/a"} on disk, R=2/plain
  ${ratio(r2, plain)} against ${d2 && dPlain ? ratio(d2, dPlain) : "n/a"}: where a ratio is higher on tmpfs, the disk's commits
  are part of what R=2 loses; where it is lower, the gap is CPU that R=2 spends beyond them.`;
}

/**
 * What one forward (the primary's call to its standby) must cost at least, measured on 2026-12-03
 * (hand-written: these are other commands' figures, least of 3 rounds): an object → object call
 * (\`npm run bench:calls\`: Worker → object → object, 148 µs, less Worker → object with the same
 * 2,500 characters, 62), a one-row commit by one of 8 objects called in turn (346 less an empty
 * call's 64 on disk; 186 less 56 on tmpfs), and the standby's step in the pure code
 * (\`npm run bench:apply\`: 252 ns per record).
 */
const FORWARD_FLOOR = { callUs: 86, commitUs: { disk: 282, tmpfs: 130 }, stepNsPerRecord: 252 };

/** R=2/R=1 at P=4 in earlier full runs, from docs/BENCHMARKS.md's history (hand-written: other runs). */
const R2_R1_BEFORE = "R=2/R=1 at P=4 in the full runs before this one was 0.70, 0.84 and 0.93 on 2026-12-01, 0.79 on 2026-12-02, and 0.71, 0.72, 0.66 and 0.86 on 2026-12-03 (the code changing between them, mostly on the router's side, and not at all between the last two)";

/**
 * What a Worker request that calls nothing costs in local workerd (\`npm run bench:calls\`, least of
 * two runs on 2026-12-03: 460–480 and 620–700 µs of CPU): every posted batch is one.
 */
const WORKER_REQUEST_US = 460;

/** Why R=2 cannot reach 0.25 of the raw in-process baseline locally: a request and two commit calls per group are already too dear. */
function rawFloor(results) {
  const r2 = cell(results, "Flux R=2", 4);
  const raw = results.raw;
  const writes = r2?.counters?.calls?.write;
  if (!r2 || !raw || !writes) return "";
  const eventsPerWrite = r2.events / writes;
  const floorUs = WORKER_REQUEST_US / 100 + (2 * CALL_WITH_COMMIT_US) / eventsPerWrite;
  return `The raw baseline spends ${fmt(raw.cpuMicrosPerEvent, 2)} µs of CPU per event in one Node process, with no I/O. Every
  100-event batch is one Worker request, at least ${WORKER_REQUEST_US} µs of CPU in local workerd even when it calls nothing
  (\`npm run bench:calls\`, 2026-12-03), and every write of ${fmt(eventsPerWrite)} events at R=2 costs at least two object calls
  that commit a row (${CALL_WITH_COMMIT_US} µs each): ${fmt(floorUs, 1)} µs per event before any of the product's own work, so at equal core
  share R=2 could reach at most ${fmt(raw.cpuMicrosPerEvent / floorUs, 2)} of raw locally; it spent ${fmt(r2.cpuMicrosPerEvent, 1)}.`;
}

/** Two throwaway builds measured on 2026-12-03 (hand-written: they compare builds, which one run cannot). */
const NOOP_STANDBY = `Two throwaway builds (not kept; P=4 on disk, three alternating 6-second runs each, 2026-12-03)
  split what a forward costs. With the standby answering each forward at once, without its step or commit, R=2 still spent
  2.9–4.0 µs of CPU per event more than R=1 (about 360 µs per forward), against 4.3–6.7 for the real build; with the primary
  not calling at all (its forward port answering itself, the second step and the forwarder kept), −0.3 to 3.3 µs more (R=1's
  own runs spread over 14.3–18.1). So per forward, roughly: 100 µs for the primary's second step and the forwarder, 250 for
  the call, and 240 for the standby's step with its commit, close to its floor (each give or take 150 µs, the runs' noise).
  A bare Worker → object → object call cost 90–140 µs of CPU the same day whether 1, 8 or 32 such calls went at once (a throwaway copy of
  \`npm run bench:calls\`), so the call costs more inside the product than alone, for reasons these runs do not separate;
  the first build's profile against R=1's puts that extra mostly outside JavaScript: \`(program)\` (workerd's own code)
  +1.4 µs per event sampled, the stub call +0.8.`;

/** R=2 against R=1 at P=4: what each forward cost in this run on disk and on tmpfs, against {@link FORWARD_FLOOR}. */
function replicationSentence(results) {
  const perForward = (r1, r2) => {
    const forwards = r2?.counters?.calls?.replicate;
    if (!r1 || !forwards) return null;
    const events = r2.events / forwards;
    return { events, extraUs: (r2.cpuMicrosPerEvent - r1.cpuMicrosPerEvent) * events, r1Us: r1.cpuMicrosPerEvent * events, writes: r2.counters.calls.write, forwards };
  };
  const onTmpfs = (label) => results.tmpfs?.matrix.find((c) => c.label === label);
  const r1 = cell(results, "Flux R=1", 4);
  const r2 = cell(results, "Flux R=2", 4);
  const disk = perForward(r1, r2);
  const tmpfs = perForward(onTmpfs("Flux R=1"), onTmpfs("Flux R=2"));
  if (!disk) return "This run has no counted P=4 cells for R=1 and R=2.";
  const floor = (place, events) => FORWARD_FLOOR.callUs + FORWARD_FLOOR.commitUs[place] + (FORWARD_FLOOR.stepNsPerRecord * events) / 1000;
  const diskFloor = floor("disk", disk.events);
  const onTmpfsText = tmpfs
    ? ` With the state on tmpfs it cost ${fmt(tmpfs.extraUs)} µs against a floor of ${fmt(floor("tmpfs", tmpfs.events))}, and a ratio of at most ${fmt(tmpfs.r1Us / (tmpfs.r1Us + floor("tmpfs", tmpfs.events)), 2)}.`
    : "";
  return `The ratio moves from run to run more than the code did: ${R2_R1_BEFORE}; this run gave
  ${fmt(r2.eventsPerSecond / r1.eventsPerSecond, 2)}${roundsRange(r2, r1)}. R=2 made one forward per write call (${fmt(disk.forwards)} forwards for ${fmt(disk.writes)} writes, ${fmt(disk.events)} events
  each): locally one isolate routes every batch and its coalescer keeps one call in flight per primary, so no second write
  reaches a primary while its forward is out, and the primary's own grouping (writes from several router isolates, as on the
  platform, travel in one forward; \`test/unit/replica-steps.test.ts\`) has nothing to merge here. Each forward cost ${fmt(disk.extraUs)} µs of CPU beyond R=1's work for the same events. A forward must cost at least an
  object → object call, a commit by one of 8 objects and the standby's step (${FORWARD_FLOOR.callUs}, ${FORWARD_FLOOR.commitUs.disk} and ${fmt((FORWARD_FLOOR.stepNsPerRecord * disk.events) / 1000)} µs on disk, measured
  on 2026-12-03 with \`npm run bench:calls\` and \`npm run bench:apply\`): ${fmt(diskFloor)} µs, which would allow a ratio of at most
  ${fmt(disk.r1Us / (disk.r1Us + diskFloor), 2)} at equal core share (this run's CPU per event, ${fmt(r1.cpuMicrosPerEvent, 1)} µs at R=1 and ${fmt(r2.cpuMicrosPerEvent, 1)} at R=2, gives
  ${fmt(r1.cpuMicrosPerEvent / r2.cpuMicrosPerEvent, 2)}; the cells' shares of a core differ).${onTmpfsText} So the disk's commit is only part of what R=2 pays beyond R=1. ${NOOP_STANDBY}
  (The profile above gives the real standby's step ${fmt(results.profile?.roles.find((r) => r.role === "replica: replicate")?.microsPerEvent, 1)} µs of sampled CPU per event.) Overlapping the two commits (sending the
  forward before the primary's own commit is durable, a protocol change) could not gain locally: \`npm run bench:calls\` on
  2026-12-03 measured a one-row commit call at 392 µs of wall time on disk against 280 of CPU (the thread waits on the
  \`fsync\`), and 378 µs per commit when 8 objects commit at once: commits of different objects do not overlap.`;
}

/** The Markdown of the analysis section. */
export function analysisSection(results) {
  const b100 = results.matrix.filter((c) => c.batchSize === 100);
  const r2 = (p) => cell(results, "Flux R=2", p);
  const plain = (p) => cell(results, "plain", p);
  const roles = results.profile?.roles.slice(0, 6).map((r) => `${r.role} ${pct(r.share)}`).join(", ");
  const top = results.profile?.top
    .filter((f) => f.where.includes("/") || !f.function.startsWith("("))
    .slice(0, 5)
    .map((f) => `\`${f.function}\` (${f.where}, ${pct(f.share)}, for ${f.mostlyFor})`)
    .join("; ");
  const sqlite = results.profile?.top.filter((f) => f.where === "(native)" && ["exec", "transactionSync"].includes(f.function)).reduce((a, f) => a + f.share, 0);
  const big = results.recovery.find((r) => r.keys === 1_000_000) ?? results.recovery.at(-1);
  const cp = big?.checkpoint;
  return `### What limits the misses

- **One thread each, locally.** The product's router, every replica and the monitor share one
  workerd isolate and thread; the plain baseline has its own workerd. Throughput × CPU per
  event gives the core-seconds per second each cell used (${b100.map((c) => `${c.label} P=${c.partitions}: ${fmt((c.eventsPerSecond * c.cpuMicrosPerEvent) / 1e6, 2)}`).join(", ")}),
  next to the load generator on a shared two-core machine. Locally, then, throughput is the
  share of a core a cell got divided by its CPU per event; the CPU and counted columns are
  the ones that carry over to the platform, where every object runs on its own thread.
- **Work per 100-event batch, counted.** At P=4: ${workPerBatch(results, 4)}. At P=16: ${workPerBatch(results, 16)}.
  Flux R=2 at P=4 spends ${fmt(r2(4)?.cpuMicrosPerEvent / plain(4)?.cpuMicrosPerEvent, 1)}× the plain baseline's CPU per event (${fmt(r2(4)?.cpuMicrosPerEvent, 1)} against ${fmt(plain(4)?.cpuMicrosPerEvent, 1)} µs).
  Its price per million events splits into ${priceShare(r2(4))}.
- **More partitions.** With 100-event batches over 10,000 keys, P=16 splits every batch
  into ~6-event sub-batches, so whatever is paid per call and per transaction is paid 16 times
  per batch: CPU per event from P=1 to P=16 goes ${fmt(r2(1)?.cpuMicrosPerEvent, 1)} → ${fmt(r2(16)?.cpuMicrosPerEvent, 1)} µs for Flux R=2 and
  ${fmt(plain(1)?.cpuMicrosPerEvent, 1)} → ${fmt(plain(16)?.cpuMicrosPerEvent, 1)} µs for the plain baseline.
  So the plain baseline is not flat here (${[1, 4, 16].map((p) => fmt(plain(p)?.eventsPerSecond)).join(" → ")} events/s for P = 1, 4, 16),
  unlike in the issue's measurement on another machine (about 108,000 and 113,000 at P=1 and 4): each of its sub-batches is
  a call that commits a row (204–286 µs of CPU on this disk and 58–170 on tmpfs, \`npm run bench:calls\` in three runs on 2026-12-03),
  and P=16 pays 16 of them per batch.
  ${partitionFloor(results)}
- **Against raw.** ${rawFloor(results)}
- **Batch size** (P=4, CPU µs per event at batches of 10 / 100 / 1000): ${batchSizes(results)}.
  The fixed cost per batch and per sub-batch dominates small batches for every design.
- **Where the CPU goes** (profile above, P=4, R=2): ${roles ?? "not profiled in this run"}.
  Heaviest product functions: ${top ?? "n/a"}. SQLite's own calls (\`exec\`, \`transactionSync\`)
  take ${sqlite === undefined ? "n/a" : pct(sqlite)} of the samples.
- **R=2 against plain at P=4, from day to day.** The full runs of 2026-12-02 gave 1.07 and
  0.98, with Flux R=2 at 26.6 µs of CPU per event and plain at 27.5 in the second, and those of 2026-12-03 before
  this one 0.89, 0.90, 1.08 and 1.13; ${p4Rounds(results)}
  The commits count for Flux on this disk: plain commits 4 times per batch and Flux R=2 about
  twice, and a commit is what the disk makes dearer. ${tmpfsSentence(results)} A commit costs this much here because local
  workerd's SQLite calls \`fsync\` at every commit: under \`strace -c\`, a copy of
  \`npm run bench:calls\` making only its insert call (10,000 one-row commits) made 10,186
  \`fsync\` calls, and one \`--cells --partitions 4\` round (three cells) 21,892. ${roleSentence(results)}
  ${ROUTER_CUTS}
- **R=2 against R=1 at P=4.** ${replicationSentence(results)}
- **Ingest during seeding.** ${seedingNumbers(results, big)} The fresh replica
  restores one slice per copied row, log pages for catch-up carry about 128k characters of
  records each, and while the survivor takes writes the monitor pauses after each copy call
  (\`FLUX_SEED_PACING\`, 2.5× the time it spent, at most 250 ms). The pause is what lets
  ingest through locally: a chain of calls between objects of one workerd process keeps
  requests from the network waiting until it ends. The longest stall while seeding is a
  full garbage collection (below).
- **Checkpoint stall.** A checkpoint of more than one slice is spread over steps
  (\`shared/replica/checkpoint-steps.ts\`): each step stages one slice of 5,000 entries
  from a copy-on-write cursor, every window keeps its keys' list beside it (so no step
  lists a million keys), and the log trim that follows deletes at most 64 rows per step. At ${fmt(cp?.keys ?? 0)} keys the longest stall while both replicas
  checkpointed was ${fmt(cp?.longestStallMs ?? NaN)} ms, against a probe timeout of 250 ms; it includes the
  2,000-event writes themselves. In the pure code (Node, storage a no-op) such a checkpoint
  took 199 steps; the longest 2,000-event write meanwhile took 79 ms (median 18 ms), where
  the checkpoint in one step took ~2 s (808 ms to split the state, the rest to serialize it).
  How long the longest stall is, locally, depends mostly on the disk under SQLite, which
  varies from day to day on this shared machine. Profiled runs of
  \`npm run bench -- --recovery-only --keys 1000000 --after-matrix --cpuprofile <dir>\`
  gave, with the state on disk, 122 and 343 ms on 2026-12-02 (the full runs that day: 318
  and 614 ms) and 58, 48 and 55 ms on 2026-12-03 (the first full run that day: 133 ms). With the
  state on tmpfs (\`TMPDIR=/dev/shm\`) they gave 40 and 80 ms on 2026-12-02. Of the 343 ms, 330
  were the synchronous part of one call the primary made inside a write step, presumably the
  step's SQLite commit being written before the call leaves; on 2026-12-03, traced with
  \`strace\`, no \`fsync\` of workerd's took longer than 15 ms, and the longest stalls (48–58 ms)
  were mostly self time in \`rowForUpdate\` (41–49 ms; its \`Map\` lookup, by the profile's
  line ticks) under the primary's apply of acknowledged entries. The product's own steps stay well under
  the probe timeout; a commit on this machine's disk does not always (\`npm run bench:calls\`:
  a call that commits one row costs about three times as much on disk as on tmpfs, 204 against
  58 µs on 2026-12-03). On the platform, storage is neither.
- **Full garbage collections.** workerd runs V8 with incremental marking off, so every full
  GC is one pause of the whole isolate, as long as marking its live heap takes; locally that
  isolate holds the router, the monitor and both replicas' copies of the state. A stall
  longer than one step is such a pause: \`npm run bench -- --recovery-only --cpuprofile <dir>\`
  profiles the largest seed and checkpoint, attributes each longest stall to what ran in it,
  and lists every full GC with its heap (\`--after-matrix\` first loads what a full run's
  workerd holds by then). Whether a pause falls inside the seeding or checkpoint window
  depends on everything allocated before it, so one run can miss it and the next catch it.
`;
}

/** The seeding numbers the analysis quotes: from the side-by-side recovery run when there is one (it is newer), else from this run. */
function seedingNumbers(results, big) {
  const side = results.recoverySideBySide;
  const now = side?.runs.filter((r) => r.build === "this").at(-1);
  const was = side?.runs.find((r) => r.build !== "this" && r.keys === now?.keys);
  if (!now || !was) {
    return `At ${fmt(big?.keys ?? 0)} keys ingest ran at ${pct(big?.ratio ?? NaN)} of normal while
  the fresh standby was seeded (${fmt(big?.seedMs ?? NaN)} ms, longest stall ${fmt(big?.longestSeedStallMs ?? NaN)} ms).`;
  }
  return `In the side-by-side recovery run, at ${fmt(now.keys)} keys ingest ran at ${pct(now.ratio)} of normal
  while the fresh standby was seeded (${fmt(now.seedMs)} ms, longest stall ${fmt(now.longestSeedStallMs)} ms; at \`${side.commit}\`: ${pct(was.ratio)},
  ${fmt(was.seedMs)} ms, ${fmt(was.longestSeedStallMs)} ms), and with no writes arriving in ${fmt(now.idleSeedMs ?? NaN)} ms (at \`${side.commit}\`: ${fmt(was.idleSeedMs ?? NaN)} ms).`;
}
