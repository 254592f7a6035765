/**
 * A simulator model of the exchange between two stages (issue 27): an upstream stage of
 * P_u partitions delivers its closed-window results to a downstream stage of P_d
 * partitions, every partition a replica pair modelled abstractly (a primary and a standby
 * holding prefixes of one log; the stable prefix is what both hold; a fail-over promotes
 * the standby with what it holds), running the real `shared/exchange/` steps and routing
 * by the downstream's real spec. One seeded RNG drives upstream and downstream crashes
 * (mid-delivery, and after logging before the standby holds an entry), downstream
 * outages (backpressure), reordered, duplicated and dropped messages; then the run
 * settles and is checked against a single-node reference (`exchange-run.ts`). Upstream
 * logs are fixed per seed: a new primary logs again the same entries its predecessor lost
 * (in the product, clients resend them; outputs of unstable entries are never delivered).
 */
import { acceptDelivery, effectiveWatermark, sourceKeysOf } from "../../shared/exchange/accept-delivery.ts";
import { sourceKey, unknownCursor, type EdgeCursor, type RoutedOutput } from "../../shared/exchange/exchange-types.ts";
import type { Delivery, DeliveryReply, DownstreamProgress } from "../../shared/wire/exchange.ts";
import { ingestRefusal, trimPoint, type OutboxEdge } from "../../shared/exchange/outbox-bounds.ts";
import { onDeliveryFailed, onDeliveryReply, planDeliveries } from "../../shared/exchange/plan-delivery.ts";
import { routeOutputs } from "../../shared/exchange/route-outputs.ts";
import { upstreamWatermark } from "../../shared/exchange/upstream-watermark.ts";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import type { DataflowSpec } from "../../shared/wire/dataflow-spec.ts";
import type { FluxRecord, WindowResult } from "../../shared/wire/window-result.ts";
import { rng as makeRng } from "../helpers/rng.ts";
import { defaultKeyGroupMap } from "../../shared/keygroups/key-groups.ts";

/** Deliberately broken variants the model must catch (`exchange.test.ts`). */
export const EXCHANGE_VARIANTS = {
  "trim-before-ack": "the upstream trims its outbox through what it has sent, before the downstream acknowledged it",
  "keep-redelivered": "the downstream keeps every record of an accepted delivery, also those at or below its hw",
  "close-on-max-watermark": "the downstream closes windows on the highest source watermark instead of the lowest",
} as const;
export type ExchangeVariant = keyof typeof EXCHANGE_VARIANTS;

const UP = "up";
const D_WINDOW_MS = 50;
const U_WINDOW_MS = 20;
const LIMITS = { maxRecords: 4, idleIntervalMs: 5 };
type Rng = ReturnType<typeof makeRng>;

/** One upstream log entry's effect: the outputs it emits and U's watermark after it. */
interface UpStep {
  outputs: WindowResult[];
  watermarkMs: number | null;
}

/** Upstream partition i's log, as both its replicas apply it: tumbling windows closed a few results per entry. */
function upstreamSteps(r: Rng, count: number): UpStep[] {
  const steps: UpStep[] = [];
  const due: WindowResult[] = [];
  let eventTimeMs = 0;
  let addedThrough = 0;
  const closeLimit = 1 + r.int(4);
  for (let s = 0; s < count; s++) {
    eventTimeMs += r.int(16);
    for (let end = addedThrough + U_WINDOW_MS; end <= eventTimeMs; end += U_WINDOW_MS) {
      addedThrough = end;
      for (let k = 0; k < 6; k++) {
        if (r.chance(0.5)) due.push({ key: `k${k}`, windowStartMs: end - U_WINDOW_MS, windowEndMs: end, values: { n: 1 + r.int(9), g: `g${r.int(7)}` }, closed: true });
      }
    }
    const outputs = due.splice(0, closeLimit);
    const closing = due.length > 0;
    steps.push({ outputs, watermarkMs: upstreamWatermark({ watermarkMs: eventTimeMs, closing, firstDueEndMs: due[0]?.windowEndMs ?? null }) });
  }
  return steps;
}

interface UpPartition {
  steps: UpStep[];
  /** Every output of the log, numbered from 1, routed by D's spec. */
  routed: RoutedOutput[];
  /** Outputs emitted by the first n steps. */
  outputsAfter: number[];
  primaryLen: number;
  standbyLen: number;
  primaryTrim: number;
  standbyTrim: number;
  /** The primary's incarnation: replies to an earlier one are dropped. */
  gen: number;
  cursors: EdgeCursor[];
  lastSent: (Delivery | null)[];
}

interface DownState {
  progress: DownstreamProgress;
  held: Record<string, number[]>;
  /** Open windows by start: the records in them, as `source#seq`. */
  open: Record<string, string[]>;
  closed: Record<string, string[]>;
  late: string[];
  closedThroughMs: number | null;
}

interface DownPartition {
  log: Delivery[];
  standbyLen: number;
  primary: DownState;
  standby: DownState;
  waiting: { i: number; gen: number; delivery: Delivery }[];
  downFor: number;
}

type Message = { to: "d"; i: number; j: number; gen: number; delivery: Delivery } | { to: "u"; i: number; j: number; gen: number; delivery: Delivery; reply: DeliveryReply };

/** What one seed found; `problems` empty means every invariant held. */
export interface ExchangeResult {
  seed: number;
  problems: string[];
  /** Fault coverage: crashes of an upstream primary with a delivery in flight, of a downstream primary holding entries its standby lacks. */
  stats: { outputs: number; deliveries: number; refusals: number; upCrashes: number; upCrashesMidDelivery: number; downCrashes: number; downCrashesUnreplicated: number };
}

export class ExchangeSim {
  readonly r: Rng;
  readonly variant: ExchangeVariant | null;
  readonly spec: DataflowSpec;
  readonly sources: string[];
  readonly ups: UpPartition[];
  readonly downs: DownPartition[];
  readonly net: Message[] = [];
  /** The highest watermark any incarnation of each source ever sent. */
  readonly reported = new Map<string, number>();
  readonly problems: string[] = [];
  readonly stats = { outputs: 0, deliveries: 0, refusals: 0, upCrashes: 0, upCrashesMidDelivery: 0, downCrashes: 0, downCrashesUnreplicated: 0 };
  readonly boundOutputs: number;
  now = 0;

  constructor(seed: number, variant: ExchangeVariant | null) {
    this.r = makeRng(seed);
    this.variant = variant;
    const pu = 1 + this.r.int(3);
    const pd = 1 + this.r.int(3);
    this.boundOutputs = 8 + this.r.int(20);
    const parsed = DataflowSpecSchema.parse({ from: UP, key: "values.g", partitions: pd, window: { kind: "tumbling", sizeMs: D_WINDOW_MS }, aggregates: { n: { op: "sum", field: "values.n" } } });
    this.spec = parsed;
    this.sources = sourceKeysOf([{ dataflow: UP, partitions: pu }]);
    this.ups = Array.from({ length: pu }, () => this.#upPartition(pd, 20 + this.r.int(40)));
    this.downs = Array.from({ length: pd }, () => ({ log: [], standbyLen: 0, primary: emptyDown(), standby: emptyDown(), waiting: [], downFor: 0 }));
  }

  #upPartition(pd: number, count: number): UpPartition {
    const steps = upstreamSteps(this.r, count);
    const outputs = steps.flatMap((s) => s.outputs).map((result, k) => ({ outputSeq: k + 1, result }));
    const outputsAfter = [0];
    for (const s of steps) outputsAfter.push((outputsAfter[outputsAfter.length - 1] ?? 0) + s.outputs.length);
    this.stats.outputs += outputs.length;
    const cursors = Array.from({ length: pd }, unknownCursor);
    return { steps, routed: routeOutputs(this.spec, defaultKeyGroupMap(this.spec.partitions), outputs, 256, { id: UP, key: "k" }), outputsAfter, primaryLen: 0, standbyLen: 0, primaryTrim: 0, standbyTrim: 0, gen: 1, cursors, lastSent: cursors.map(() => null) };
  }

  /** U_i's primary logs its next entry, unless an edge is too far behind (backpressure). */
  logUp(i: number): void {
    const u = this.ups[i] as UpPartition;
    if (u.primaryLen >= u.steps.length) return;
    const last = this.#stableOutputs(u);
    if (ingestRefusal({ dataflow: UP, partition: i }, last, u.primaryTrim, this.#edges(u), this.boundOutputs) !== null) {
      this.stats.refusals += 1;
      return;
    }
    u.primaryLen += 1;
  }

  replicateUp(i: number): void {
    const u = this.ups[i] as UpPartition;
    u.standbyLen = u.primaryLen;
    u.standbyTrim = u.primaryTrim;
  }

  /** U_i's primary crashes (mid-delivery or not): the standby takes over with what it holds, cursors unknown; a fresh standby is seeded from it. */
  crashUp(i: number): void {
    const u = this.ups[i] as UpPartition;
    if (u.cursors.some((c) => c.inFlight !== null)) this.stats.upCrashesMidDelivery += 1;
    u.primaryLen = u.standbyLen;
    u.primaryTrim = u.standbyTrim;
    u.gen += 1;
    u.cursors = u.cursors.map(unknownCursor);
    u.lastSent = u.lastSent.map(() => null);
    this.stats.upCrashes += 1;
  }

  /** U_i's primary plans and sends deliveries from its stable outputs. */
  deliverUp(i: number): void {
    const u = this.ups[i] as UpPartition;
    const stable = Math.min(u.primaryLen, u.standbyLen);
    const outbox = { source: { dataflow: UP, partition: i, partitions: this.ups.length }, trimmedThrough: u.primaryTrim, outputs: u.routed.slice(u.primaryTrim, this.#stableOutputs(u)), watermarkMs: stable === 0 ? null : (u.steps[stable - 1]?.watermarkMs ?? null) };
    for (const { partition: j, delivery } of planDeliveries(outbox, u.cursors, this.now, LIMITS)) {
      u.lastSent[j] = delivery;
      if (delivery.watermarkMs !== null) this.reported.set(sourceKey(delivery.source), Math.max(this.reported.get(sourceKey(delivery.source)) ?? delivery.watermarkMs, delivery.watermarkMs));
      this.net.push({ to: "d", i, j, gen: u.gen, delivery });
      this.stats.deliveries += 1;
    }
  }

  trimUp(i: number): void {
    const u = this.ups[i] as UpPartition;
    const edges = this.variant === "trim-before-ack" ? this.#edges(u).map((e) => ({ ...e, cursor: { ...e.cursor, acked: e.cursor.inFlight?.toSeq ?? e.cursor.acked } })) : this.#edges(u);
    u.primaryTrim = trimPoint(u.primaryTrim, edges);
  }

  timeoutUp(i: number, j: number): void {
    const u = this.ups[i] as UpPartition;
    const sent = u.lastSent[j];
    if (sent) onDeliveryFailed(u.cursors[j] as EdgeCursor, sent);
  }

  #stableOutputs(u: UpPartition): number {
    return u.outputsAfter[Math.min(u.primaryLen, u.standbyLen)] ?? 0;
  }

  #edges(u: UpPartition): OutboxEdge[] {
    return u.cursors.map((cursor, partition) => ({ dataflow: "down", partition, cursor }));
  }

  receive(m: Message): void {
    if (m.to === "u") {
      const u = this.ups[m.i] as UpPartition;
      if (m.gen !== u.gen) return;
      const outcome = onDeliveryReply(u.cursors[m.j] as EdgeCursor, m.delivery, m.reply, u.primaryTrim);
      if (outcome.status === "lost") this.problems.push(`lost: ${outcome.message}`);
      return;
    }
    const d = this.downs[m.j] as DownPartition;
    if (d.downFor > 0) return;
    const status = this.#apply(d.primary, m.delivery, `primary of d${m.j}`);
    if (status === "accepted") {
      d.log.push(m.delivery);
      d.waiting.push({ i: m.i, gen: m.gen, delivery: m.delivery });
    } else this.net.push({ ...m, to: "u", reply: { status, hw: d.standby.progress[sourceKey(m.delivery.source)]?.hw ?? 0 } });
  }

  /** D_j's standby applies what its primary logged; the answers waiting for it go out with the stable hw. */
  replicateDown(j: number): void {
    const d = this.downs[j] as DownPartition;
    if (d.downFor > 0) return;
    for (const delivery of d.log.slice(d.standbyLen)) this.#apply(d.standby, delivery, `standby of d${j}`);
    d.standbyLen = d.log.length;
    for (const w of d.waiting.splice(0)) {
      this.net.push({ to: "u", i: w.i, j, gen: w.gen, delivery: w.delivery, reply: { status: "accepted", hw: d.standby.progress[sourceKey(w.delivery.source)]?.hw ?? 0 } });
    }
  }

  /** D_j's primary crashes after logging entries its standby does not hold: the standby takes over, a fresh standby is seeded. */
  crashDown(j: number, outageSteps: number): void {
    const d = this.downs[j] as DownPartition;
    if (d.log.length > d.standbyLen) this.stats.downCrashesUnreplicated += 1;
    d.log.length = d.standbyLen;
    d.primary = structuredClone(d.standby);
    d.waiting = [];
    d.downFor = outageSteps;
    this.stats.downCrashes += 1;
  }

  /** Applies one delivery to a downstream replica's state, as its log entry. */
  #apply(state: DownState, delivery: Delivery, where: string): "accepted" | "duplicate" | "gap" {
    const result = acceptDelivery(state.progress, delivery, this.sources);
    if (result.status === "unknown-source") throw new Error(`${where}: unknown source ${result.source}`);
    if (result.status !== "accepted") return result.status;
    const key = sourceKey(delivery.source);
    const keep = this.variant === "keep-redelivered";
    const records = keep ? delivery.records : result.records;
    const seqs = keep ? delivery.outputSeqs : result.outputSeqs;
    const held = (state.held[key] ??= []);
    records.forEach((record, k) => {
      const seq = seqs[k] ?? 0;
      const id = `${key}#${seq}`;
      if (seq <= (held[held.length - 1] ?? 0)) this.problems.push(`${where}: ${id} applied again or out of order (after ${held[held.length - 1]})`);
      held.push(seq);
      const start = String(windowStart(record));
      if (state.closedThroughMs !== null && Number(start) + D_WINDOW_MS <= state.closedThroughMs) state.late.push(`${id} into window ${start}, closed at ${state.closedThroughMs}`);
      else (state.open[start] ??= []).push(id);
    });
    const closeAtMs = this.variant === "close-on-max-watermark" ? maxWatermark(state.progress) : result.tickMs;
    const lowest = Math.min(...this.sources.map((s) => this.reported.get(s) ?? Number.NEGATIVE_INFINITY));
    if (result.tickMs !== null && result.tickMs > lowest) this.problems.push(`${where}: effective watermark ${result.tickMs} passed ${lowest}, the lowest any source reported`);
    if (closeAtMs !== null && (state.closedThroughMs === null || closeAtMs > state.closedThroughMs)) close(state, closeAtMs);
    return "accepted";
  }
}

function emptyDown(): DownState {
  return { progress: {}, held: {}, open: {}, closed: {}, late: [], closedThroughMs: null };
}

function windowStart(record: FluxRecord): number {
  return Math.floor(record[1] / D_WINDOW_MS) * D_WINDOW_MS;
}

function maxWatermark(progress: DownstreamProgress): number | null {
  const marks = Object.values(progress).flatMap((p) => (p.watermarkMs === null ? [] : [p.watermarkMs]));
  return marks.length === 0 ? null : Math.max(...marks);
}

/** Closes every window of D ending at or before `watermarkMs` (allowed lateness 0). */
function close(state: DownState, watermarkMs: number): void {
  state.closedThroughMs = watermarkMs;
  for (const start of Object.keys(state.open)) {
    if (Number(start) + D_WINDOW_MS > watermarkMs) continue;
    state.closed[start] = state.open[start] ?? [];
    delete state.open[start];
  }
}

/** D_j's effective watermark over its sources (its primary's). */
export function downWatermark(sim: ExchangeSim, j: number): number | null {
  return effectiveWatermark(sim.downs[j]?.primary.progress ?? {}, sim.sources);
}
export { D_WINDOW_MS, windowStart, type Message };
