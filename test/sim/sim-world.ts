/**
 * The simulated world of one seed (issue 4): replicas, the coordinator's durable record,
 * routers' caches, producers' bookkeeping and cursor readers, all driven by one seeded
 * RNG over simulated time. The actors that act on it are in `sim-actors.ts`; the run and
 * its final checks in `run-simulation.ts`.
 */
import { desiredConfigs } from "../../shared/monitor/desired-config.ts";
import { planDataflow } from "../../shared/plan-dataflow.ts";
import { WriteCoalescer } from "../../shared/router/write-coalescer.ts";
import { DataflowSpecSchema, type DataflowSpec } from "../../shared/wire/dataflow-spec.ts";
import { DataflowRecordSchema, type DataflowRecord } from "../../shared/wire/routing.ts";
import { rng as makeRng } from "../helpers/rng.ts";
import { CursorReader } from "./sim-checks.ts";
import { SimClock } from "./sim-clock.ts";
import { SimReplicas } from "./sim-replicas.ts";
import type { Variant } from "./variants.ts";

export interface SimOptions {
  variant?: Variant | null;
  /** Take both replicas of a partition down at once (checks `unavailable`). */
  bothDown?: boolean;
  trace?: boolean;
  /** What the dataflow runs: window aggregates (default), the heavy-hitters custom operator, or windows closed by clock ticks. */
  workload?: Workload;
}

export const WORKLOADS = ["window", "heavy-hitters", "ticks"] as const;
export type Workload = (typeof WORKLOADS)[number];

/** The dataflow of each workload; every one reports each record once (`n`, or `packets` per source). */
function workloadSpec(workload: Workload, partitions: number): unknown {
  const base = { stream: "s", key: "k", timeField: "ts", partitions };
  const window = { window: { kind: "tumbling", sizeMs: 100 }, aggregates: { n: { op: "count" }, v: { op: "sum", field: "v" } } };
  if (workload === "window") return { ...base, ...window };
  if (workload === "ticks") return { ...base, ...window, idleAdvanceMs: 0 };
  // Every source that sent anything alerts (one destination suffices), so `packets` counts every record.
  return { ...base, operator: { name: "heavy-hitters", params: { windowMs: 100, bytesField: "v", destinationField: "k", minDestinations: 1 } } };
}

export type Batch = { producer: string; seq: number; events: { k: string; ts: number; v: number }[] };

export const HEARTBEAT_MS = 50;
export const ROUTER_DEADLINE_MS = 60;
/** A primary's forward gives up first, so the router hears why (as in the Durable Object). */
const FORWARD_DEADLINE_MS = 36;
export const SETTLE_LIMIT_MS = 30_000;

export class SimWorld {
  readonly rng: ReturnType<typeof makeRng>;
  readonly clock = new SimClock();
  readonly trace: string[] = [];
  readonly violations: string[] = [];
  readonly variant: Variant | null;
  readonly options: SimOptions;
  readonly replicas: SimReplicas;
  readonly spec: DataflowSpec;
  /** The coordinator's durable state: what the monitor saved last, and whether it is up. */
  stored: string;
  storedHealth = "{}";
  coordinatorUp = true;
  /** Epoch and primary per partition as last saved (for the promotion-without-fencing variant). */
  lastSaved: Map<number, { epoch: number; primary: string }>;
  readonly initial: DataflowRecord;
  readonly routingTtlMs: number;
  /** Each router's cached routing and its coalescer of concurrent writes (one per isolate). */
  readonly routers: { cache: DataflowRecord; fetchedAt: number; coalescer: WriteCoalescer }[];
  readonly acked = new Map<string, Batch>();
  readonly allBatches = new Map<string, Batch>();
  readonly readers: CursorReader[];
  faults = 0;

  constructor(seed: number, options: SimOptions) {
    this.options = options;
    this.rng = makeRng(seed);
    this.variant = options.variant ?? null;
    const log = (line: string) => this.log(line);
    const tuning = { dedupWindow: 256, checkpointEvery: 1 + this.rng.int(4) };
    this.replicas = new SimReplicas(this.clock, this.rng, { maxLatencyMs: 8, slowMs: 200, duplicateChance: 0.05, forwardDeadlineMs: FORWARD_DEADLINE_MS, tuning, variant: this.variant }, log);
    this.spec = DataflowSpecSchema.parse(workloadSpec(options.workload ?? "window", 1 + this.rng.int(3)));
    this.stored = JSON.stringify({ ...planDataflow("df", this.spec, 0), ready: true });
    this.initial = this.record();
    for (const route of this.initial.routes) {
      for (const init of desiredConfigs(this.initial, route)) this.replicas.host(init.name).init({ ...init, create: true });
    }
    this.lastSaved = new Map(this.initial.routes.map((r) => [r.partition, { epoch: r.epoch, primary: r.primary }]));
    this.routingTtlMs = 50 + this.rng.int(1500);
    this.routers = Array.from({ length: 2 + this.rng.int(5) }, () => ({
      cache: this.initial,
      fetchedAt: 0,
      coalescer: new WriteCoalescer({
        maxBatches: 1 + this.rng.int(8),
        maxChars: 2000,
        pollMs: 1,
        giveUpMs: 2 * ROUTER_DEADLINE_MS,
        sleep: (ms) => this.clock.sleep(ms),
      }),
    }));
    this.readers = this.initial.routes.map((r) => new CursorReader(r.partition, this.violations));
  }

  log(line: string): void {
    if (this.options.trace) this.trace.push(`[${String(this.clock.now).padStart(6)}] ${line}`);
  }

  /** The stored record, read with a god's-eye view (works while the coordinator is down). */
  record(): DataflowRecord {
    return DataflowRecordSchema.parse(JSON.parse(this.stored));
  }

  /** The stored record as a router or the monitor reads it: fails while the coordinator is down. */
  load(): DataflowRecord {
    if (!this.coordinatorUp) throw new Error("coordinator down");
    return this.record();
  }
}
