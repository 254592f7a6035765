/**
 * A dataflow on a `MemoryCluster` with the real router, replica and monitor code, a
 * retrying client and a single-node reference: the shared scaffolding of the Node
 * fail-over tests (and the seed of the simulator).
 */
import { expect } from "vitest";
import { routeEvents } from "../../shared/ingest/route-events.ts";
import type { MonitorPort } from "../../shared/monitor/monitor-port.ts";
import { runMonitorTick, type MonitorStore } from "../../shared/monitor/run-monitor-tick.ts";
import { windowAggregate } from "../../shared/operators/window-aggregate.ts";
import { readResults } from "../../shared/router/read-results.ts";
import { writeBatch } from "../../shared/router/write-batch.ts";
import { sendAlone } from "../../shared/router/write-partition.ts";
import type { DataflowSpec } from "../../shared/wire/dataflow-spec.ts";
import type { DataflowRecord, HealthMap } from "../../shared/wire/routing.ts";
import type { FluxRecord } from "../../shared/wire/window-result.ts";
import { record as makeRecord, spec as makeSpec } from "./fixtures.ts";
import { MemoryCluster } from "./memory-cluster.ts";

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
  store: MonitorStore = { save: async () => {} };

  constructor(specOverrides: Record<string, unknown> = {}, checkpointEvery = 3) {
    this.spec = makeSpec({ partitions: 2, ...specOverrides });
    this.record = makeRecord("df", this.spec);
    this.cluster = new MemoryCluster({ dedupWindow: 256, checkpointEvery });
    this.cluster.setUp(this.record);
    this.monitorPort = this.cluster;
  }

  /** One monitor tick, 500 ms of simulated time after the previous one. */
  async tick(): Promise<void> {
    this.nowMs += 500;
    await runMonitorTick(this.monitorPort, this.store, [{ record: this.record, health: this.health }], this.nowMs, { failAfterMisses: 2, locationHints: [], missSpacingMs: 250 });
  }

  /** Posts once from a possibly stale copy of the routing; throws what the router would answer. */
  async postOnce(batch: Batch): Promise<void> {
    const subBatches = routeEvents(this.spec, batch.events, 0, 256);
    await writeBatch(sendAlone(this.cluster), [{ record: structuredClone(this.record), subBatches }], batch, async () => [this.record]);
    this.acknowledged.push(batch);
  }

  /** Posts until acknowledged, ticking the monitor between attempts. @returns how many attempts failed. */
  async post(batch: Batch, maxAttempts = 30): Promise<number> {
    for (let failures = 0; failures < maxAttempts; failures++) {
      try {
        await this.postOnce(batch);
        return failures;
      } catch {
        await this.tick();
      }
    }
    throw new Error(`batch ${batch.producer}#${batch.seq} never acknowledged`);
  }

  /** Ticks until every partition is healthy (or `maxTicks` pass). */
  async settle(maxTicks = 40): Promise<void> {
    for (let i = 0; i < maxTicks && this.record.routes.some((r) => r.status !== "healthy"); i++) await this.tick();
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
