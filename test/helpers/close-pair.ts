/** A primary and standby of one partition set up directly (no coordinator), for spread-close tests in workerd. */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import { clicksSpec, uniqueName } from "./api.ts";

const spec = DataflowSpecSchema.parse(clicksSpec("s", { partitions: 1, replication: 2 }));

/** A fresh pair at epoch 1: the primary forwards to the standby. */
export async function closePair() {
  const primaryName = uniqueName("close-primary");
  const standbyName = uniqueName("close-standby");
  const base = { dataflowId: uniqueName("df"), partition: 0, spec, epoch: 1, version: 1, create: true } as const;
  const primary = env.PARTITION_REPLICA.getByName(primaryName);
  const standby = env.PARTITION_REPLICA.getByName(standbyName);
  expect(await standby.init({ ...base, name: standbyName, role: "standby", hasStandby: false, standby: null })).toEqual({ status: "ok" });
  expect(await primary.init({ ...base, name: primaryName, role: "primary", hasStandby: true, standby: standbyName })).toEqual({ status: "ok" });
  return { primary, standby, primaryName, standbyName };
}

/** Records of `keys` keys in one 10 s window (each once), and one record that passes its end, as log entry texts. */
export function fillAndCloser(keys: number): { fill: string; closer: string } {
  return { fill: JSON.stringify(Array.from({ length: keys }, (_, i) => [`k${i}`, 1_000, 1])), closer: JSON.stringify([["k0", 20_000, 1]]) };
}

/** What a replica's outputs table holds, in output order. */
export async function storedOutputs(name: string): Promise<string[]> {
  return runInDurableObject(env.PARTITION_REPLICA.getByName(name), (_instance, state) =>
    state.storage.sql.exec<{ body: string }>("SELECT body FROM outputs ORDER BY output_seq").toArray().map((row) => row.body),
  );
}
