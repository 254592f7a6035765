/**
 * The router's side of the normal-case protocol for one partition's sub-batch
 * (DESIGN.md §4): primary assigns the LSN, the standby is brought up to it (filling
 * gaps from the primary's log), then the primary learns the standby's LSN. Only then
 * is the sub-batch acknowledged. Safe to repeat: replicas dedup and skip held LSNs.
 */
import type { LogEntry } from "../wire/persisted.ts";
import type {
  AckStandby,
  AckStandbyReply,
  ApplyBatch,
  ApplyBatchReply,
  Refusal,
  Replicate,
  ReplicateReply,
} from "../wire/replica-rpc.ts";
import type { PartitionRoute } from "../wire/routing.ts";

/** How a router reaches replicas by name; the Worker backs it with Durable Object stubs. */
export interface ReplicaPort {
  applyBatch(name: string, msg: ApplyBatch): Promise<ApplyBatchReply>;
  replicate(name: string, msg: Replicate): Promise<ReplicateReply>;
  ackStandby(name: string, msg: AckStandby): Promise<AckStandbyReply>;
  readLog(name: string, epoch: number, fromLsn: number, toLsn: number): Promise<LogEntry[] | Refusal>;
}

/** What happened to one partition's sub-batch. */
export type PartitionOutcome =
  | { status: "applied" | "duplicate"; partition: number; lsn: number; replicated: boolean; late: number }
  | { status: "too-old"; partition: number; high: number }
  | { status: "refused"; partition: number; replica: string; refusal: Refusal }
  | { status: "incomplete"; partition: number; replica: string; reason: string };

/** Gap-fill rounds before giving up on a standby that keeps reporting gaps. */
const MAX_GAP_FILLS = 3;

/** Runs the protocol for one partition. Transport errors propagate to the caller. */
export async function writePartition(
  port: ReplicaPort,
  route: PartitionRoute,
  batch: { producer: string; seq: number; records: string },
): Promise<PartitionOutcome> {
  const { partition, epoch, primary, standby } = route;
  const applied = await port.applyBatch(primary, { epoch, ...batch });
  if (applied.status === "too-old") return { status: "too-old", partition, high: applied.high };
  if (applied.status !== "applied" && applied.status !== "duplicate") {
    return { status: "refused", partition, replica: primary, refusal: applied };
  }
  // A duplicate's late records were counted when it was first applied (issue 11).
  if (standby === null) return { status: applied.status, partition, lsn: applied.lsn, replicated: false, late: applied.status === "applied" ? (applied.late ?? 0) : 0 };

  let entries: LogEntry[] = applied.status === "applied" ? [{ lsn: applied.lsn, ...batch }] : [];
  let held = 0;
  let late = 0;
  for (let round = 0; ; round++) {
    const reply = await port.replicate(standby, { epoch, entries, upToLsn: applied.lsn });
    if (reply.status === "ok") {
      held = reply.lsn;
      late = applied.status === "applied" ? (reply.late ?? 0) : 0;
      break;
    }
    if (reply.status !== "gap") return { status: "refused", partition, replica: standby, refusal: reply };
    if (round >= MAX_GAP_FILLS) {
      return { status: "incomplete", partition, replica: standby, reason: `standby stuck at LSN ${reply.lsn}` };
    }
    const missing = await port.readLog(primary, epoch, reply.lsn + 1, applied.lsn);
    if (!Array.isArray(missing)) return { status: "refused", partition, replica: primary, refusal: missing };
    entries = missing;
  }

  const ack = await port.ackStandby(primary, { epoch, lsn: held });
  if (ack.status !== "ok") return { status: "refused", partition, replica: primary, refusal: ack };
  return { status: applied.status, partition, lsn: applied.lsn, replicated: true, late };
}
