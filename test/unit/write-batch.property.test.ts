/**
 * Property (issues 2 and 12): random batches from several producers, posted concurrently
 * through a router's write coalescer with random resends, reordering, failed calls and
 * forwards, and replica restarts mid-flight, each resent until acknowledged, give exactly
 * the results of a single-node reference fed each distinct batch once.
 */
import { describe, expect, it } from "vitest";
import { windowAggregate } from "../../shared/operators/window-aggregate.ts";
import { readResults } from "../../shared/router/read-results.ts";
import { routeEvents } from "../../shared/ingest/route-events.ts";
import { writeBatch } from "../../shared/router/write-batch.ts";
import { WriteCoalescer } from "../../shared/router/write-coalescer.ts";
import type { FluxRecord } from "../../shared/wire/window-result.ts";
import { MemoryCluster } from "../helpers/memory-cluster.ts";
import { record, spec } from "../helpers/fixtures.ts";
import { rng } from "../helpers/rng.ts";

const SEEDS = 200;

async function runSeed(seed: number) {
  const r = rng(seed);
  const s = spec({ partitions: 1 + r.int(4), replication: r.chance(0.8) ? 2 : 1 });
  const df = record("df", s);
  const cluster = new MemoryCluster({ dedupWindow: 256, checkpointEvery: 1 + r.int(5) });
  cluster.setUp(df);
  const replicaNames = df.routes.flatMap((route) => [route.primary, ...(route.standby ? [route.standby] : [])]);
  const failChance = r.chance(0.5) ? 0.05 : 0;
  cluster.beforeCall = async (name, method) => {
    for (let i = r.int(4); i > 0; i--) await Promise.resolve();
    if (r.chance(failChance)) throw new Error(`injected: ${method} to ${name} failed`);
  };
  const sleep = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
  const coalescer = new WriteCoalescer({ maxBatches: 1 + r.int(6), maxChars: 50 + r.int(400), pollMs: 1, giveUpMs: 10_000, sleep });
  const post = async (b: (typeof batches)[number]) => {
    const subBatches = routeEvents(s, b.events, 0, 256);
    for (let attempt = 1; ; attempt++) {
      try {
        return await writeBatch(coalescer.sendVia(cluster), [{ record: df, subBatches }], b, async () => [df]);
      } catch (err) {
        if (attempt >= 50) throw err;
      }
    }
  };

  const producers = ["p1", "p2", "p3"].slice(0, 1 + r.int(3));
  const batches = producers.flatMap((producer) =>
    Array.from({ length: 3 + r.int(12) }, (_, i) => ({
      producer,
      seq: i + 1,
      events: Array.from({ length: 1 + r.int(6) }, () => ({ page: `k${r.int(7)}`, ts: r.int(5000), bytes: r.int(100) - 20 })),
    })),
  );
  // Every batch is sent at least once; some are resent, all in a random order, in waves of concurrent posts.
  const sends = r.shuffle([...batches, ...batches.filter(() => r.chance(0.4))]);
  while (sends.length > 0) {
    const wave = sends.splice(0, 1 + r.int(4));
    const posted = Promise.all(wave.map(post));
    // A replica restarts while writes and forwards are in flight (its memory is lost, storage kept).
    if (r.chance(0.3)) {
      for (let i = r.int(6); i > 0; i--) await Promise.resolve();
      cluster.restart(replicaNames[r.int(replicaNames.length)] ?? "");
    }
    await posted;
  }

  const reference = windowAggregate(s);
  let state = reference.init();
  for (const b of batches) {
    const records: FluxRecord[] = b.events.map((e) => [e.page, e.ts, e.bytes]);
    state = reference.process(state, records, () => {
      throw new Error("no window may close with this lateness");
    });
  }
  const expected = reference.openResults(state, {});
  const { results: actual } = await readResults(async (name, epoch, filter) => cluster.host(name).readResults(epoch, filter), df, {});
  expect(actual, `seed ${seed}`).toEqual(expected);
  // Paging through the same results, two at a time, gives the same list.
  const paged: typeof actual = [];
  let after: { windowStartMs: number; key: string } | undefined;
  for (let page = 0; page < 1000; page++) {
    const { results, next } = await readResults(async (name, epoch, filter) => cluster.host(name).readResults(epoch, filter), df, { limit: 2, after });
    paged.push(...results);
    if (!next) break;
    after = next;
  }
  expect(paged, `seed ${seed}: paged`).toEqual(expected);
  for (const route of df.routes) {
    if (!route.standby) continue;
    const primary = cluster.host(route.primary).status();
    const standby = cluster.host(route.standby).status();
    expect(standby?.lsn, `seed ${seed}: standby of partition ${route.partition} holds every LSN`).toBe(primary?.lsn);
    expect(primary?.appliedLsn, `seed ${seed}: primary stable prefix`).toBe(primary?.lsn);
  }
}

describe("writeBatch property", () => {
  it(`matches a single-node reference over ${SEEDS} seeds of coalesced writes, resends, reordering, failed calls and restarts`, { timeout: 120_000 }, async () => {
    for (let seed = 1; seed <= SEEDS; seed++) await runSeed(seed);
  });
});
