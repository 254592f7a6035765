/**
 * The router's side of the normal-case protocol for one partition's sub-batch
 * (DESIGN.md §4, issue 12): one `write` call to the primary, which logs it, forwards it
 * to its standby itself and answers once the standby holds it. Safe to repeat: the
 * primary dedups, and a resent entry still pending waits for that entry.
 */
import type { Refusal, WriteBatch, WriteReply, Write } from "../wire/replica-rpc.ts";
import type { PartitionRoute } from "../wire/routing.ts";

/** How a router reaches primaries by name; the Worker backs it with Durable Object stubs. */
export interface ReplicaPort {
  write(name: string, msg: Write): Promise<WriteReply>;
}

/** What happened to one partition's sub-batch. */
export type PartitionOutcome =
  | { status: "applied" | "duplicate"; partition: number; lsn: number; replicated: boolean; late: number }
  | { status: "too-old"; partition: number; high: number }
  | { status: "refused"; partition: number; replica: string; refusal: Refusal }
  /** A stage reading the dataflow lags too far behind this partition (issue 27): nothing was logged. */
  | { status: "blocked"; partition: number; reason: string; until: string }
  /** `standby`: the route's standby when the write was sent (null: the primary alone holds the partition). */
  | { status: "incomplete"; partition: number; replica: string; standby: string | null; reason: string };

/** How a router sends one batch to a primary: alone, or coalesced with concurrent ones (`write-coalescer.ts`). */
export type SendBatch = (primary: string, epoch: number, batch: WriteBatch) => Promise<WriteReply>;

/** Sends each batch in a call of its own. */
export function sendAlone(port: ReplicaPort): SendBatch {
  return (primary, epoch, batch) => port.write(primary, { epoch, batches: [batch] });
}

/** Runs the protocol for one partition. Transport errors propagate to the caller. */
export async function writePartition(send: SendBatch, route: PartitionRoute, batch: WriteBatch): Promise<PartitionOutcome> {
  const { partition, epoch, primary, standby } = route;
  const reply = await send(primary, epoch, batch);
  if (reply.status === "blocked") return { status: "blocked", partition, reason: reply.reason, until: reply.until };
  if (reply.status !== "ok") return { status: "refused", partition, replica: primary, refusal: reply };
  const outcome = reply.results[0];
  if (!outcome) return { status: "incomplete", partition, replica: primary, standby, reason: "the primary answered no outcome" };
  switch (outcome.status) {
    case "applied":
      return { status: "applied", partition, lsn: outcome.lsn, replicated: outcome.replicated, late: outcome.late };
    case "duplicate":
      return { status: "duplicate", partition, lsn: outcome.lsn, replicated: outcome.replicated, late: 0 };
    case "too-old":
      return { status: "too-old", partition, high: outcome.high };
    case "blocked":
      return { status: "blocked", partition, reason: outcome.reason, until: outcome.until };
    case "unconfirmed":
      return { status: "incomplete", partition, replica: primary, standby, reason: outcome.reason };
  }
}
