/**
 * Close entries (issue 12, `shared/closing/`): a primary whose operator holds a close
 * back logs record-less entries itself until the close is done; they replicate like
 * any entry, so both replicas number the same outputs, dedup never records them, no
 * producer is answered for them, and a restart mid-close goes on from its checkpoint
 * and log.
 */
import { describe, expect, it } from "vitest";
import { compileDataflow } from "../../shared/operators/compile.ts";
import type { ForwardPort } from "../../shared/replica/forwarder.ts";
import { ReplicaHost } from "../../shared/replica/replica-host.ts";
import type { WindowResult } from "../../shared/wire/window-result.ts";
import { MemoryReplicaStorage } from "../helpers/memory-replica-storage.ts";
import { spec } from "../helpers/fixtures.ts";

const SPEC = spec({ window: { kind: "tumbling", sizeMs: 1000, allowedLatenessMs: 0 } });
const tuning = { dedupWindow: 64, checkpointEvery: 2, closeKeysPerStep: 3 };
const KEYS = Array.from({ length: 11 }, (_, i) => `k${(i * 5) % 11}`);
const FILL = { producer: "p", seq: 1, records: JSON.stringify(KEYS.map((k, i) => [k, 100 + i, i])) };
const CLOSER = { producer: "p", seq: 2, records: JSON.stringify([["z", 1_500, 1]]) };
const turns = () => new Promise((resolve) => setTimeout(resolve, 0));

function init(host: ReplicaHost, role: "primary" | "standby", hasStandby: boolean): void {
  host.init({ name: `r-${role}`, dataflowId: "df", partition: 0, spec: SPEC, role, epoch: 1, hasStandby, standby: hasStandby ? "r-standby" : null, version: 1, create: true });
}

/** The outputs one whole close gives. */
function wholeClose(): WindowResult[] {
  const live = compileDataflow(SPEC).bind();
  const out: WindowResult[] = [];
  for (const batch of [FILL, CLOSER]) live.process(JSON.parse(batch.records), (r) => out.push(r));
  return out;
}

/** A primary whose standby is reached at once; `later` steps run when the test says (`run`). */
function pair() {
  // No checkpoint: the log keeps every entry for the test to read.
  const tuning = { dedupWindow: 64, checkpointEvery: 1000, closeKeysPerStep: 3 };
  const standbyStorage = new MemoryReplicaStorage();
  const standby = new ReplicaHost(standbyStorage, tuning, { replicate: () => Promise.reject(new Error("a standby does not forward")) });
  init(standby, "standby", false);
  const port: ForwardPort = { replicate: async (_name, msg) => standby.replicate(msg) };
  const storage = new MemoryReplicaStorage();
  const primary = new ReplicaHost(storage, tuning, port);
  init(primary, "primary", true);
  return { primary, storage, standby, standbyStorage };
}

describe("close entries", () => {
  it("finish a close on both replicas without new writes, numbering the same outputs", async () => {
    const { primary, storage, standbyStorage } = pair();
    const reply = await primary.write({ epoch: 1, batches: [FILL, CLOSER] });
    expect(reply).toEqual({ status: "ok", results: [expect.objectContaining({ status: "applied", lsn: 1 }), expect.objectContaining({ status: "applied", lsn: 2 })] });
    for (let i = 0; i < 20; i++) await turns();
    expect(storage.outputs.map((o) => o.result)).toEqual(wholeClose());
    expect(standbyStorage.outputs).toEqual(storage.outputs);
    // LSN 2 closed 3 keys; 8 more at 3 per close entry.
    const log = [...storage.log.values()].map((e) => e.producer);
    expect(log).toEqual(["p", "p", "$close", "$close", "$close"]);
    expect([...standbyStorage.log.values()].map((e) => e.producer)).toEqual(log);
    expect(Object.keys(primary.load()?.dedup ?? {})).toEqual(["$p"]);
    expect(primary.load()?.operator.closing()).toBe(false);
  });

  it("go on after a restart mid-close, from the checkpoint and the log", async () => {
    const storage = new MemoryReplicaStorage();
    const held: Array<() => void> = [];
    const port: ForwardPort = {
      replicate: () => Promise.reject(new Error("no standby")),
      later: (step) => new Promise((resolve) => held.push(() => resolve(step()))),
    };
    const host = new ReplicaHost(storage, tuning, port);
    init(host, "primary", false);
    await host.write({ epoch: 1, batches: [FILL, CLOSER] });
    for (let i = 0; i < 2; i++) {
      held.shift()?.();
      await turns();
    }
    expect(storage.outputs).toHaveLength(9);
    expect(storage.meta?.checkpointLsn).toBeGreaterThan(0);
    host.forget();
    // A fresh host over the same storage: a probe starts the close again (the old host's held step finds no state).
    const restarted = new ReplicaHost(storage, tuning, { replicate: () => Promise.reject(new Error("no standby")) });
    expect(restarted.load()?.operator.closing()).toBe(true);
    restarted.probe();
    for (const run of held.splice(0)) run();
    for (let i = 0; i < 20; i++) await turns();
    expect(storage.outputs.map((o) => o.result)).toEqual(wholeClose());
    expect(storage.outputs.map((o) => o.outputSeq)).toEqual(wholeClose().map((_, i) => i + 1));
  });
});
