/**
 * Writes one posted batch to every partition it touches, across every dataflow reading
 * the stream, concurrently. A stale-epoch answer triggers one routing refresh and a retry
 * of that partition (safe: replicas dedup). If key groups moved meanwhile (issue 28), the
 * sub-batches were split by the old owners: the dataflow's records are split again by the
 * new ones and every part written again, as a client's resend would be (a partition that
 * applied its old part judges each record by its group's memory, `group-dedup.ts`). Any
 * partition that cannot confirm the batch turns the whole answer into an error, so the
 * client resends with the same seq.
 */
import { FluxError } from "../errors.ts";
import type { PartitionAck } from "../wire/ingest.ts";
import type { Refusal } from "../wire/replica-rpc.ts";
import type { DataflowRecord } from "../wire/routing.ts";
import type { FluxRecord } from "../wire/window-result.ts";
import { writePartition, type PartitionOutcome, type SendBatch } from "./write-partition.ts";
import { keyGroupMapOf, partitionOfKey } from "../keygroups/key-groups.ts";

/** One dataflow's share of the batch: its record and sub-batches by partition. */
export interface RoutedDataflow {
  record: DataflowRecord;
  subBatches: Map<number, FluxRecord[]>;
}

/** Per dataflow, what each touched partition reported. */
export interface DataflowAck {
  dataflow: string;
  partitions: PartitionAck[];
}

/**
 * Runs the protocol for all sub-batches.
 * @param send one batch to a primary (alone, or coalesced with concurrent ones).
 * @param refresh fetches fresh routing for the stream after a stale-epoch answer.
 * @throws FluxError `SEQ_TOO_OLD` (409) or `UNAVAILABLE` (503, retryable) naming the partitions.
 */
export async function writeBatch(
  send: SendBatch,
  routed: readonly RoutedDataflow[],
  batch: { producer: string; seq: number },
  refresh: () => Promise<DataflowRecord[]>,
): Promise<DataflowAck[]> {
  let fresh: Promise<DataflowRecord[]> | undefined;
  const refreshOnce = () => (fresh ??= refresh());

  const writeOne = async (record: DataflowRecord, partition: number, records: string): Promise<PartitionOutcome> => {
    const attempt = async (rec: DataflowRecord): Promise<PartitionOutcome> => {
      const route = rec.routes[partition];
      if (!route) return { status: "incomplete", partition, replica: "", standby: null, reason: "partition missing from routing" };
      try {
        return await writePartition(send, route, { ...batch, records });
      } catch (err) {
        return { status: "incomplete", partition, replica: route.primary, standby: route.standby, reason: err instanceof Error ? err.message : String(err) };
      }
    };
    const first = await attempt(record);
    if (first.status !== "refused" || first.refusal.status !== "stale") return first;
    const updated = (await refreshOnce()).find((r) => r.id === record.id);
    return updated && sameOwners(updated, record) ? attempt(updated) : first;
  };

  const writeAll = (record: DataflowRecord, subBatches: ReadonlyMap<number, FluxRecord[]>) =>
    Promise.all([...subBatches].map(([partition, records]) => writeOne(record, partition, JSON.stringify(records))));

  const outcomes = await Promise.all(
    routed.map(async ({ record, subBatches }) => {
      const list = await writeAll(record, subBatches);
      if (!list.some((o) => o.status === "refused" && o.refusal.status === "stale")) return { record, outcomes: list };
      const updated = (await refreshOnce()).find((r) => r.id === record.id);
      if (!updated || sameOwners(updated, record)) return { record, outcomes: list };
      return { record: updated, outcomes: await writeAll(updated, splitByOwner(updated, subBatches)) };
    }),
  );
  return outcomes.map(({ record, outcomes: list }) => ({ dataflow: record.id, partitions: list.map((o) => toAck(record, o, batch)) }));
}

/** What a replica's refusal means for the client, in the product's words. */
const REFUSAL_WORDS: Record<Refusal["status"], string> = {
  stale: "has moved to a newer epoch (a fail-over or a move of key groups happened while the batch was written)",
  behind: "has not been configured for this epoch yet (a fail-over or recovery is under way)",
  "wrong-role": "no longer holds the role the routing gave it (a fail-over is under way)",
};

/**
 * Where the monitor goes from a write that did not complete: with a standby, either replica
 * may have failed and the other carries on; without one (replication 1, or a replication-2
 * partition that lost its standby), the primary is the partition's only copy.
 */
function incompleteWords(replication: 1 | 2, standby: string | null): string {
  if (standby !== null) {
    return "the failure may be the primary's or its standby's, so the monitor is probing the partition's replicas (one that stays down is replaced: its partner carries on, or without one the partition waits for it to return)";
  }
  const why = replication === 1 ? "the partition has no standby (replication 1)" : "the partition has no standby right now (the monitor is recovering it with a fresh one)";
  return `${why}, so its primary alone holds it: the monitor is probing it, and while it stays down the partition waits for it to return`;
}

function toAck(record: DataflowRecord, outcome: PartitionOutcome, batch: { producer: string; seq: number }): PartitionAck {
  const dataflow = record.id;
  switch (outcome.status) {
    case "applied":
    case "duplicate":
      return { partition: outcome.partition, lsn: outcome.lsn, replicated: outcome.replicated, duplicate: outcome.status === "duplicate", late: outcome.late };
    case "too-old":
      throw new FluxError(
        "SEQ_TOO_OLD",
        `seq ${batch.seq} of producer '${batch.producer}' is below the dedup window of partition ${outcome.partition} of dataflow '${dataflow}' (highest seq ${outcome.high}); its outcome cannot be confirmed`,
        { dataflow, partition: outcome.partition, highestSeq: outcome.high },
      );
    case "blocked":
      throw new FluxError(
        "BACKPRESSURE",
        `partition ${outcome.partition} of dataflow '${dataflow}' takes no new batches for now: ${outcome.reason}; nothing was applied; retry with the same Flux-Seq, it goes on by itself once ${outcome.until}`,
        { dataflow, partition: outcome.partition, reason: outcome.reason },
      );
    case "refused":
      throw new FluxError(
        "UNAVAILABLE",
        `partition ${outcome.partition} of dataflow '${dataflow}' could not confirm the batch: replica ${outcome.replica} ${REFUSAL_WORDS[outcome.refusal.status]}; retry with the same Flux-Seq`,
        { dataflow, partition: outcome.partition, replica: outcome.replica, refusal: outcome.refusal },
      );
    case "incomplete":
      throw new FluxError(
        "UNAVAILABLE",
        outcome.replica
          ? `partition ${outcome.partition} of dataflow '${dataflow}' could not confirm the batch: the write to its primary ${outcome.replica} did not complete (${outcome.reason}); ${incompleteWords(record.spec.replication, outcome.standby)}; retry with the same Flux-Seq`
          : `partition ${outcome.partition} of dataflow '${dataflow}' could not confirm the batch: ${outcome.reason}; retry with the same Flux-Seq`,
        { dataflow, partition: outcome.partition, replica: outcome.replica, reason: outcome.reason },
      );
  }
}

function sameOwners(a: DataflowRecord, b: DataflowRecord): boolean {
  return a.routes.length === b.routes.length && JSON.stringify(a.keyGroups) === JSON.stringify(b.keyGroups);
}

/** The records of `subBatches` split again by `record`'s owners (a record's key is its first field). */
function splitByOwner(record: DataflowRecord, subBatches: ReadonlyMap<number, FluxRecord[]>): Map<number, FluxRecord[]> {
  const map = keyGroupMapOf(record);
  const parts = new Map<number, FluxRecord[]>();
  for (const records of subBatches.values()) {
    for (const r of records) {
      const partition = partitionOfKey(map, r[0]);
      const part = parts.get(partition);
      if (part) part.push(r);
      else parts.set(partition, [r]);
    }
  }
  return parts;
}
