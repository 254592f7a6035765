/** What the router answers when a partition cannot confirm a batch: the message names what failed. */
import { describe, expect, it } from "vitest";
import { FluxError } from "../../shared/errors.ts";
import { routeEvents } from "../../shared/ingest/route-events.ts";
import { writeBatch } from "../../shared/router/write-batch.ts";
import type { SendBatch } from "../../shared/router/write-partition.ts";
import type { DataflowRecord } from "../../shared/wire/routing.ts";
import { record, spec } from "../helpers/fixtures.ts";
import { keyGroupMapOf } from "../../shared/keygroups/key-groups.ts";

/** The error `writeBatch` throws for one event to partition 0 of `r` when every write fails with `reason`. */
async function failedWrite(r: DataflowRecord, reason: string): Promise<FluxError> {
  const send: SendBatch = () => Promise.reject(new Error(reason));
  const subBatches = routeEvents(r.spec, [{ page: "a", ts: 1, bytes: 1 }], 0, 256, keyGroupMapOf(r));
  const err = await writeBatch(send, [{ record: r, subBatches }], { producer: "p", seq: 1 }, async () => [r]).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(FluxError);
  return err as FluxError;
}

describe("writeBatch errors", () => {
  it("a write whose primary failed because its standby is down says so, and still names the primary", async () => {
    const r = record("df", spec({ partitions: 1 }));
    const primary = r.routes[0]?.primary ?? "";
    const standby = r.routes[0]?.standby ?? "";
    const { code, message, details } = await failedWrite(r, `replica ${standby} is down`);
    expect(code).toBe("UNAVAILABLE");
    expect(message).toContain(`the write to its primary ${primary} did not complete (replica ${standby} is down)`);
    expect(message).toContain("the primary's or its standby's");
    expect(message).toContain("its partner carries on");
    expect(details).toMatchObject({ dataflow: "df", partition: 0, replica: primary, reason: `replica ${standby} is down` });
  });

  it("at replication 1 says the primary alone holds the partition, with no word of a standby's failure or a partner", async () => {
    const r = record("solo", spec({ partitions: 1, replication: 1 }));
    const primary = r.routes[0]?.primary ?? "";
    const { code, message, details } = await failedWrite(r, "network connection lost");
    expect(code).toBe("UNAVAILABLE");
    expect(message).toBe(
      `partition 0 of dataflow 'solo' could not confirm the batch: the write to its primary ${primary} did not complete (network connection lost); ` +
        "the partition has no standby (replication 1), so its primary alone holds it: the monitor is probing it, and while it stays down the partition waits for it to return; retry with the same Flux-Seq",
    );
    expect(details).toMatchObject({ dataflow: "solo", partition: 0, replica: primary, reason: "network connection lost" });
  });

  it("at replication 2 with the standby lost (degraded) says the primary alone holds the partition while it is recovered", async () => {
    const healthy = record("df", spec({ partitions: 1 }));
    const r: DataflowRecord = { ...healthy, routes: healthy.routes.map((route) => ({ ...route, standby: null, status: "recovering" as const })) };
    const { message } = await failedWrite(r, "network connection lost");
    expect(message).toContain("the partition has no standby right now (the monitor is recovering it with a fresh one), so its primary alone holds it");
    expect(message).toContain("while it stays down the partition waits for it to return");
    expect(message).not.toMatch(/standby's|partner/);
  });

  it("after a stale answer, retries the partition at its new epoch; if key groups moved, splits the records again by the new owners", async () => {
    const r = record("df", spec({ partitions: 2 }));
    const subBatches = routeEvents(r.spec, [{ page: "a", ts: 1, bytes: 1 }], 0, 256, keyGroupMapOf(r));
    const [partition = -1] = [...subBatches.keys()];
    const sent: [string, number][] = [];
    const send: SendBatch = async (primary, epoch) => {
      sent.push([primary, epoch]);
      return epoch === 1 ? { status: "stale", epoch: 2 } : { status: "ok", results: [{ status: "applied", lsn: 1, replicated: true, late: 0 }] };
    };
    const bumped = (owners: number[] | null): DataflowRecord => ({
      ...r,
      keyGroups: owners === null ? r.keyGroups : { groups: r.keyGroups?.groups ?? 256, owners },
      routes: r.routes.map((route) => ({ ...route, epoch: route.epoch + 1 })),
    });
    const primary = (p: number) => r.routes[p]?.primary ?? "";
    // A fail-over: same owners, a new epoch. The partition is retried there.
    const acks = await writeBatch(send, [{ record: r, subBatches }], { producer: "p", seq: 1 }, async () => [bumped(null)]);
    expect(acks[0]?.partitions).toMatchObject([{ partition, duplicate: false }]);
    expect(sent).toEqual([[primary(partition), 1], [primary(partition), 2]]);
    // A move switched every group to the other partition meanwhile: the record goes there, split by the new owners.
    sent.length = 0;
    const owners = Array.from({ length: r.keyGroups?.groups ?? 256 }, (_, g) => (g + 1) % 2);
    const moved = await writeBatch(send, [{ record: r, subBatches }], { producer: "p", seq: 1 }, async () => [bumped(owners)]);
    expect(moved[0]?.partitions).toMatchObject([{ partition: 1 - partition, duplicate: false }]);
    expect(sent).toEqual([[primary(partition), 1], [primary(1 - partition), 2]]);
  });
});
