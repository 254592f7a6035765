/**
 * Drives one partition's online recovery forward (DESIGN.md §4): snapshot the survivor,
 * copy it and its outputs to the fresh replica in chunks, install it, replay the
 * survivor's log into it, then attach it as standby under a new epoch. Every step is
 * recorded in `route.recovery`, so a monitor restarted half-way resumes where it was;
 * repeating a step is harmless. Ingest on the partition continues throughout.
 */
import type { DataflowRecord, MonitorEvent, PartitionRoute } from "../wire/routing.ts";
import type { MonitorPort } from "./monitor-port.ts";
import { syncStandby } from "./sync-standby.ts";

/** Outputs copied per call. */
const OUTPUT_PAGE = 1000;
/** Log entries replayed per call. */
const LOG_PAGE = 200;
/** Attach once the fresh replica is at most this many LSNs behind; routers fill the rest. */
const ATTACH_LAG = 50;

/** Limits one tick's share of the work so the monitor keeps probing on time. */
export interface RecoveryBudget {
  /** Replica calls this tick may still make. */
  calls: number;
}

/**
 * Advances the recovery of `route` (status `recovering`) as far as the budget allows.
 * @param save persists the record after each completed step (the caller saves once more at the end).
 * @returns an event when the recovery finished or had to restart.
 */
export async function advanceRecovery(
  port: MonitorPort,
  record: DataflowRecord,
  route: PartitionRoute,
  budget: RecoveryBudget,
  save: () => Promise<void>,
): Promise<Omit<MonitorEvent, "atMs"> | null> {
  const recovery = route.recovery;
  if (!recovery) return null;
  const { epoch, primary } = route;
  const target = recovery.replica;
  const spend = () => --budget.calls >= 0;
  const restart = (why: string) => {
    // The primary's log hold follows the snapshot: a new route version outranks the old hold.
    if (recovery.snapshot) route.version += 1;
    recovery.phase = "seeding";
    recovery.snapshot = null;
    recovery.chunksCopied = 0;
    recovery.outputsCopied = 0;
    return { partition: route.partition, kind: "recovery-restarted" as const, detail: `seeding ${target} again: ${why}` };
  };

  while (recovery.phase === "seeding" && spend()) {
    if (!recovery.snapshot) {
      const begun = await port.beginSeed(primary, epoch);
      if (begun.status !== "ok") return null;
      recovery.snapshot = { id: begun.id, lsn: begun.lsn, chunks: begun.chunks, outputSeq: begun.outputSeq };
      route.version += 1;
    } else if (recovery.chunksCopied < recovery.snapshot.chunks) {
      const chunk = await port.readSeedChunk(primary, epoch, recovery.snapshot.id, recovery.chunksCopied);
      if (chunk.status === "gone") return restart(`snapshot ${recovery.snapshot.id} was lost by ${primary}`);
      if (chunk.status !== "ok") return null;
      const staged = await port.acceptSeedChunk(target, recovery.snapshot.id, recovery.chunksCopied, chunk.body, record.spec);
      if (staged.status !== "ok") return restart(`${target} refused a chunk (${staged.status})`);
      recovery.chunksCopied += 1;
    } else if (recovery.outputsCopied < recovery.snapshot.outputSeq) {
      const page = await port.readOutputPage(primary, epoch, recovery.outputsCopied, OUTPUT_PAGE);
      if (page.status !== "ok") return null;
      const outputs = page.outputs.filter((o) => o.outputSeq <= (recovery.snapshot?.outputSeq ?? 0));
      const last = outputs[outputs.length - 1];
      if (!last) return restart(`${primary} has no outputs after ${recovery.outputsCopied}`);
      const staged = await port.acceptOutputs(target, outputs);
      if (staged.status !== "ok") return restart(`${target} refused outputs (${staged.status})`);
      recovery.outputsCopied = last.outputSeq;
    } else {
      const { id, chunks, lsn, outputSeq } = recovery.snapshot;
      const identity = { name: target, dataflowId: record.id, partition: route.partition, spec: record.spec };
      const done = await port.finishSeed(target, { ...identity, epoch, snapshotId: id, chunks, lsn, outputSeq });
      if (done.status !== "ok") return restart(`${target} could not install the snapshot (${done.status})`);
      recovery.phase = "catching-up";
    }
    await save();
  }

  while (recovery.phase === "catching-up" && spend()) {
    const [survivor, fresh] = await Promise.all([port.probe(primary), port.probe(target)]);
    if (!survivor || !fresh) return fresh ? null : restart(`${target} lost its state`);
    if (fresh.lsn + ATTACH_LAG >= survivor.lsn) {
      // Attach: from the new epoch on, every write goes to both; the rest is copied in `attached`.
      route.standby = target;
      recovery.phase = "attached";
      route.epoch += 1;
      route.version += 1;
      await save();
      return null;
    }
    const entries = await port.readLog(primary, epoch, fresh.lsn + 1, Math.min(survivor.lsn, fresh.lsn + LOG_PAGE));
    if (!Array.isArray(entries)) return null;
    const last = entries[entries.length - 1];
    if (!last) return restart(`${primary} no longer holds LSN ${fresh.lsn + 1}`);
    const replayed = await port.replicate(target, { epoch, entries, upToLsn: last.lsn });
    if (replayed.status !== "ok" && replayed.status !== "gap") return restart(`${target} refused the log (${replayed.status})`);
  }
  if (recovery.phase === "attached" && spend()) {
    const [primaryNow, standbyNow] = await Promise.all([port.probe(primary), port.probe(target)]);
    if (!primaryNow || !standbyNow) return null;
    // The primary's LSN once it has taken its new standby bounds what it logged alone.
    if (recovery.attachLsn === null && primaryNow.epoch === route.epoch && primaryNow.hasStandby) recovery.attachLsn = primaryNow.lsn;
    if (recovery.attachLsn === null) return null;
    await syncStandby(port, route, primaryNow, standbyNow);
    const copied = await port.probe(target);
    if (!copied || copied.lsn < recovery.attachLsn) return null;
    route.recovery = null;
    route.status = "healthy";
    route.version += 1;
    return { partition: route.partition, kind: "recovery-finished", detail: `${target} holds LSN ${copied.lsn} and is standby at epoch ${route.epoch}` };
  }
  return null;
}
