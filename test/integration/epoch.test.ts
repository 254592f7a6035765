/** Epoch fencing on real replica Durable Objects: older epochs and wrong roles are refused. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { replicaName } from "../../shared/names.ts";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import { clicksSpec, uniqueName } from "../helpers/api.ts";

describe("epoch fencing", () => {
  it("a replica refuses every call from an older epoch, and older re-inits", async () => {
    const dataflowId = uniqueName("fenced");
    const name = replicaName(dataflowId, 0, 0);
    const stub = env.PARTITION_REPLICA.getByName(name);
    const spec = DataflowSpecSchema.parse(clicksSpec("s"));
    const init = { name, dataflowId, partition: 0, spec, role: "primary" as const, hasStandby: false, version: 1, create: true };
    expect(await stub.init({ ...init, epoch: 1 })).toEqual({ status: "ok" });
    const records = JSON.stringify([["a", 1, 1]]);
    const write = (epoch: number, seq: number) => stub.write({ epoch, batches: [{ producer: "p", seq, records }] });
    expect(await write(1, 1)).toEqual({ status: "ok", results: [{ status: "applied", lsn: 1, replicated: false, late: 0 }] });

    expect(await stub.init({ ...init, epoch: 2 })).toEqual({ status: "ok" });
    expect(await write(1, 2)).toEqual({ status: "stale", epoch: 2 });
    expect(await stub.flush(1)).toEqual({ status: "stale", epoch: 2 });
    expect(await stub.readLog(1, 1, 1)).toEqual({ status: "stale", epoch: 2 });
    expect(await stub.readResults(1, {})).toEqual({ status: "stale", epoch: 2 });
    expect(await stub.init({ ...init, epoch: 1 })).toEqual({ status: "stale", epoch: 2 });
    expect(await stub.status()).toMatchObject({ epoch: 2, lsn: 1 });
    expect(await write(2, 2)).toEqual({ status: "ok", results: [{ status: "applied", lsn: 2, replicated: false, late: 0 }] });
  });

  it("a standby refuses primary-only calls", async () => {
    const dataflowId = uniqueName("roles");
    const name = replicaName(dataflowId, 0, 1);
    const stub = env.PARTITION_REPLICA.getByName(name);
    const spec = DataflowSpecSchema.parse(clicksSpec("s"));
    await stub.init({ name, dataflowId, partition: 0, spec, role: "standby", epoch: 1, hasStandby: false, version: 1, create: true });
    expect(await stub.write({ epoch: 1, batches: [{ producer: "p", seq: 1, records: "[]" }] })).toEqual({ status: "wrong-role", role: "standby" });
    expect(await stub.flush(1)).toEqual({ status: "wrong-role", role: "standby" });
  });
});
