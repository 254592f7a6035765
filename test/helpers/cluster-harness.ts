/**
 * A dataflow on a `MemoryCluster` with the real router, replica and monitor code, a
 * retrying client and a single-node reference: the shared scaffolding of the Node
 * fail-over tests (and the seed of the simulator).
 */
import { expect } from "vitest";
import { FluxError } from "../../shared/errors.ts";
import { routeEvents } from "../../shared/ingest/route-events.ts";
import type { MonitorPort } from "../../shared/monitor/monitor-port.ts";
import { runMonitorTick, type MonitorStore } from "../../shared/monitor/run-monitor-tick.ts";
import type { ReleasedMemo } from "../../shared/moves/advance-move.ts";
import { windowAggregate } from "../../shared/operators/window-aggregate.ts";
import { readResults } from "../../shared/router/read-results.ts";
import { writeBatch } from "../../shared/router/write-batch.ts";
import { sendAlone } from "../../shared/router/write-partition.ts";
import type { DataflowSpec } from "../../shared/wire/dataflow-spec.ts";
import type { DataflowRecord, HealthMap } from "../../shared/wire/routing.ts";
import type { FluxRecord } from "../../shared/wire/window-result.ts";
import { record as makeRecord, spec as makeSpec } from "./fixtures.ts";
import { MemoryCluster } from "./memory-cluster.ts";
import { keyGroupMapOf } from "../../shared/keygroups/key-groups.ts";

export interface Batch {
  producer: string;
  seq: number;
  events: { page: string; ts: number; bytes: number }[];
}

export class ClusterHarness {
  readonly spec: DataflowSpec;
  readonly record: DataflowRecord;
  readonly cluster: MemoryCluster;
  readonly health: HealthMap = {};
  readonly acknowledged: Batch[] = [];
  nowMs = 0;
  /** Replaces the monitor's port or store to inject monitor faults. */
  monitorPort: MonitorPort;
  /** What the monitor keeps in memory of its moves' releases. */
  readonly released: ReleasedMemo = new Map();
  store: MonitorStore = { save: async () => {}, released: () => this.released };

  /** `checkpointSliceKeys`: keys per checkpoint slice (so a seed has many chunks). */
  constructor(specOverrides: Record<string, unknown> = {}, checkpointEvery = 3, checkpointSliceKeys?: number) {
    this.spec = makeSpec({ partitions: 2, ...specOverrides });
    this.record = makeRecord("df", this.spec);
    this.cluster = new MemoryCluster({ dedupWindow: 256, checkpointEvery, ...(checkpointSliceKeys === undefined ? {} : { checkpointSliceKeys }) });
    this.cluster.setUp(this.record);
    this.monitorPort = this.cluster;
    this.#routing = structuredClone(this.record);
  }

  /** One monitor tick, 500 ms of simulated time after the previous one. */
  async tick(): Promise<void> {
    this.nowMs += 500;
    const unexpected: unknown[] = [];
    const log = { error: (context: string, err: unknown) => void unexpected.push(new Error(`monitor: ${context}`, { cause: err })) };
    await runMonitorTick(this.monitorPort, this.store, [{ record: this.record, health: this.health }], this.nowMs, { failAfterMisses: 2, locationHints: [], missSpacingMs: 250 }, log);
    // An error that is not a failed replica call is a bug, never something to retry past.
    if (unexpected.length > 0) throw unexpected[0];
  }

  /**
   * Posts once as a router would: from its cached routing, which is refreshed only when a
   * replica answers with a newer epoch or a post failed (so it is often stale after a
   * fail-over); throws what the router would answer.
   */
  async postOnce(batch: Batch): Promise<void> {
    const subBatches = routeEvents(this.spec, batch.events, 0, 256, keyGroupMapOf(this.record));
    const refresh = async () => [(this.#routing = structuredClone(this.record))];
    try {
      await writeBatch(sendAlone(this.cluster), [{ record: this.#routing, subBatches }], batch, refresh);
    } catch (err) {
      this.#routing = structuredClone(this.record);
      throw err;
    }
    this.acknowledged.push(batch);
  }

  /** The routing this harness's router has cached. */
  #routing: DataflowRecord;

  /**
   * Posts until acknowledged, ticking the monitor between attempts; only a retryable
   * answer is retried. @returns how many attempts failed.
   */
  async post(batch: Batch, maxAttempts = 30): Promise<number> {
    for (let failures = 0; failures < maxAttempts; failures++) {
      try {
        await this.postOnce(batch);
        return failures;
      } catch (err) {
        if (!(err instanceof FluxError) || !err.retryable) throw err;
        await this.tick();
      }
    }
    throw new Error(`batch ${batch.producer}#${batch.seq} never acknowledged`);
  }

  /** Ticks until every partition is healthy; throws if that takes more than `maxTicks`. */
  async settle(maxTicks = 40): Promise<void> {
    for (let i = 0; i < maxTicks && this.record.routes.some((r) => r.status !== "healthy"); i++) await this.tick();
    const statuses = this.record.routes.map((r) => r.status);
    if (statuses.some((s) => s !== "healthy")) throw new Error(`not healthy after ${maxTicks} ticks: ${statuses.join(", ")}`);
  }

  /** What the results API would serve now, merged across partitions. */
  results() {
    return readResults(async (name, epoch, filter) => this.cluster.host(name).readResults(epoch, filter), this.record, {});
  }

  /** Asserts the served results equal a single-node run over each acknowledged batch once. */
  async expectExactResults(message: string): Promise<void> {
    const op = windowAggregate(this.spec);
    let state = op.init();
    const seen = new Set<string>();
    for (const b of this.acknowledged) {
      const id = `${b.producer}#${b.seq}`;
      if (seen.has(id)) continue;
      seen.add(id);
      state = op.process(state, b.events.map((e): FluxRecord => [e.page, e.ts, e.bytes]), () => {});
    }
    const { results } = await this.results();
    expect(results, message).toEqual(op.openResults(state, {}));
  }
}
