/**
 * Links between stages and their upstreams (issue 27): each upstream's record lists the
 * stages reading it (`readers`), and its replicas are told, so its primaries deliver to
 * them. A link changes the upstream's configuration under new route versions; the monitor
 * re-sends it to any replica that missed it (`desired-config.ts` compares readers).
 */
import { desiredConfigs } from "../shared/monitor/desired-config.ts";
import type { MonitorPort } from "../shared/monitor/monitor-port.ts";
import { sourcesOf } from "../shared/wire/dataflow-spec.ts";
import type { DataflowRecord } from "../shared/wire/routing.ts";
import type { MonitorRecords } from "./monitor-records.ts";

/** Where a new stage starts reading one upstream: from its first result; `resultsSoFar` were emitted before (delivered first). */
export interface StageStart {
  dataflow: string;
  resultsSoFar: number | null;
}

/**
 * Adds (or with `add` false removes) `stage` as a reader of each dataflow it reads, and
 * tells their replicas. @returns the replicas that did not take their new configuration
 * yet (the monitor retries them).
 */
export async function linkStage(records: MonitorRecords, port: Pick<MonitorPort, "configure">, stage: DataflowRecord, add: boolean): Promise<string[]> {
  const missed: string[] = [];
  for (const id of sourcesOf(stage.spec)) {
    const upstream = records.read(id);
    if (!upstream) continue;
    const readers = add ? [...new Set([...upstream.readers, stage.id])].sort() : upstream.readers.filter((r) => r !== stage.id);
    if (readers.join(",") === upstream.readers.join(",")) continue;
    upstream.readers = readers;
    for (const route of upstream.routes) route.version += 1;
    records.put(upstream);
    const told = upstream.routes.flatMap((route) => desiredConfigs(upstream, route)).map(async (init) => {
      const reply = await port.configure(init.name, init).catch(() => null);
      if (reply?.status !== "ok") missed.push(init.name);
    });
    await Promise.all(told);
  }
  return missed;
}

/** How many results each upstream of `stage` has emitted so far, from its primaries (null: one did not answer). */
export async function stageStarts(records: MonitorRecords, port: Pick<MonitorPort, "probe">, stage: DataflowRecord): Promise<StageStart[]> {
  return Promise.all(
    sourcesOf(stage.spec).map(async (dataflow) => {
      const routes = records.read(dataflow)?.routes ?? [];
      const counts = await Promise.all(routes.map(async (route) => (await port.probe(route.primary).catch(() => null))?.outputSeq ?? null));
      const resultsSoFar = counts.includes(null) ? null : (counts as number[]).reduce((a, b) => a + b, 0);
      return { dataflow, resultsSoFar };
    }),
  );
}
