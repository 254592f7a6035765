/**
 * The coordinator: the single object that stores dataflow specs and routing tables
 * (DESIGN.md §4). It configures replicas when a dataflow is created; routers read routing
 * from it and cache it. Fail-over decisions arrive with the monitor (issue 3).
 */
import { DurableObject } from "cloudflare:workers";
import { isSameSpec, planDataflow, replicaInits } from "../shared/plan-dataflow.ts";
import type { DataflowSpec } from "../shared/wire/dataflow-spec.ts";
import { DataflowRecordSchema, type DataflowRecord } from "../shared/wire/routing.ts";

const PREFIX = "dataflow:";

/** Outcome of creating a dataflow. */
type PutDataflowResult =
  | { status: "created" | "unchanged"; record: DataflowRecord }
  | { status: "conflict"; record: DataflowRecord };

export class Coordinator extends DurableObject<Env> {
  /**
   * Creates a dataflow, or confirms an identical one. A different spec under an existing
   * id is a conflict. Re-sending the same spec finishes a creation that was interrupted.
   */
  async putDataflow(id: string, spec: DataflowSpec): Promise<PutDataflowResult> {
    const existing = this.#read(id);
    if (existing && !isSameSpec(existing.spec, spec)) return { status: "conflict", record: existing };
    const record = existing ?? planDataflow(id, spec, Date.now());
    if (!existing) this.ctx.storage.kv.put(PREFIX + id, record);
    if (!record.ready) {
      await Promise.all(
        replicaInits(record).map(async (init) => {
          const reply = await this.env.PARTITION_REPLICA.getByName(init.name).init(init);
          if (reply.status !== "ok") throw new Error(`replica ${init.name} refused init: ${JSON.stringify(reply)}`);
        }),
      );
      record.ready = true;
      this.ctx.storage.kv.put(PREFIX + id, record);
    }
    return { status: existing?.ready ? "unchanged" : "created", record };
  }

  async getDataflow(id: string): Promise<DataflowRecord | null> {
    return this.#read(id);
  }

  async listDataflows(): Promise<DataflowRecord[]> {
    const records: DataflowRecord[] = [];
    for (const [, value] of this.ctx.storage.kv.list({ prefix: PREFIX })) {
      records.push(DataflowRecordSchema.parse(value));
    }
    return records;
  }

  #read(id: string): DataflowRecord | null {
    const value = this.ctx.storage.kv.get(PREFIX + id);
    return value === undefined ? null : DataflowRecordSchema.parse(value);
  }
}
