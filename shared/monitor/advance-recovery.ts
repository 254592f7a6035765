/**
 * Drives one partition's online recovery forward (DESIGN.md §4): snapshot the survivor,
 * copy it and its outputs to the fresh replica in chunks, install it, replay the
 * survivor's log into it, then attach it as standby under a new epoch. Phase changes are
 * recorded in `route.recovery`; how much of the snapshot is copied is not (issue 12: no
 * record write per chunk) but asked of the fresh replica, which stages every chunk
 * durably, at the start of each tick's copying. So a monitor restarted half-way resumes
 * exactly where the fresh replica is; repeating a step is harmless. Ingest on the
 * partition continues throughout: copy steps are paced while it takes writes.
 */
import { isIngestActive } from "../recovery-pacing/seed-pause.ts";
import { logPageEntries } from "../recovery-pacing/log-page.ts";
import type { DataflowRecord, MonitorEvent, PartitionRoute, Recovery } from "../wire/routing.ts";
import type { MonitorPort } from "./monitor-port.ts";
import { syncStandby } from "./sync-standby.ts";

/** Outputs copied per call. */
const OUTPUT_PAGE = 1000;
/** Attach once the fresh replica is at most this many LSNs behind; routers fill the rest. */
const ATTACH_LAG = 50;

/** Limits one tick's share of the work so the monitor keeps probing on time. */
export interface RecoveryBudget {
  /** Replica calls this tick may still make. */
  calls: number;
}

type Outcome = Omit<MonitorEvent, "atMs"> | null;

/** One partition's recovery within one tick. */
interface Step {
  port: MonitorPort;
  record: DataflowRecord;
  route: PartitionRoute;
  recovery: Recovery;
  spend: () => boolean;
  restart: (why: string) => Outcome;
  /** The survivor's logged LSN at the previous copy step (null: none yet). */
  survivorLsn: number | null;
}

/**
 * Advances the recovery of `route` (status `recovering`) as far as the budget allows.
 * @param save persists the record after each phase change (the caller saves once more at the end).
 * @returns an event when the recovery finished or had to restart.
 */
export async function advanceRecovery(
  port: MonitorPort,
  record: DataflowRecord,
  route: PartitionRoute,
  budget: RecoveryBudget,
  save: () => Promise<void>,
): Promise<Outcome> {
  const recovery = route.recovery;
  if (!recovery) return null;
  const restart = (why: string) => {
    // The primary's log hold follows the snapshot: a new route version outranks the old hold.
    if (recovery.snapshot) route.version += 1;
    recovery.phase = "seeding";
    recovery.snapshot = null;
    return { partition: route.partition, kind: "recovery-restarted" as const, detail: `seeding ${recovery.replica} again: ${why}` };
  };
  const step: Step = { port, record, route, recovery, spend: () => --budget.calls >= 0, restart, survivorLsn: null };
  if (recovery.phase === "seeding") {
    const outcome = await seed(step, save);
    if (outcome || recovery.phase === "seeding") return outcome;
  }
  // Attaching ends the tick's share: the new epoch reaches both replicas first.
  if (recovery.phase === "catching-up") return catchUp(step, save);
  return recovery.phase === "attached" && step.spend() ? finishAttached(step) : null;
}

/** Leaves the thread to ingest after a copy step that saw the survivor at `lsn`. */
async function pace(step: Step, lsn: number): Promise<void> {
  const active = isIngestActive(step.survivorLsn, lsn);
  step.survivorLsn = lsn;
  await step.port.paceSeed?.(active);
}

/** Seeding: takes the snapshot, copies its chunks and outputs, installs it. */
async function seed(step: Step, save: () => Promise<void>): Promise<Outcome> {
  const { port, record, route, recovery, restart } = step;
  const { epoch, primary } = route;
  const target = recovery.replica;
  // What the fresh replica holds of the snapshot: asked once per tick, then counted here.
  let held: { chunks: number; outputSeq: number } | null = null;
  while (recovery.phase === "seeding" && step.spend()) {
    const snapshot = recovery.snapshot;
    if (!snapshot) {
      const begun = await port.beginSeed(primary, epoch);
      if (begun.status !== "ok") return null;
      recovery.snapshot = { id: begun.id, lsn: begun.lsn, chunks: begun.chunks, outputSeq: begun.outputSeq };
      route.version += 1;
      held = null;
      await save();
    } else if (!held) {
      const progress = await port.seedProgress(target, snapshot.id, snapshot.chunks);
      // Holding state already: installed before a restart lost the phase change, or not
      // this seed's; `finishSeed` tells which (it is idempotent).
      if (progress.status === "wrong-role") held = { chunks: snapshot.chunks, outputSeq: snapshot.outputSeq };
      else if (progress.status !== "ok") return restart(`${target} cannot take a seed (${progress.status})`);
      else held = { chunks: progress.chunks, outputSeq: progress.outputSeq };
    } else if (held.chunks < snapshot.chunks) {
      const chunk = await port.readSeedChunk(primary, epoch, snapshot.id, held.chunks);
      if (chunk.status === "gone") return restart(`snapshot ${snapshot.id} was lost by ${primary}`);
      if (chunk.status !== "ok") return null;
      const staged = await port.acceptSeedChunk(target, snapshot.id, held.chunks, chunk.body, record.spec);
      if (staged.status !== "ok") return restart(`${target} refused a chunk (${staged.status})`);
      held.chunks += 1;
      await pace(step, chunk.lsn);
    } else if (held.outputSeq < snapshot.outputSeq) {
      const page = await port.readOutputPage(primary, epoch, held.outputSeq, OUTPUT_PAGE);
      if (page.status !== "ok") return null;
      const outputs = page.outputs.filter((o) => o.outputSeq <= snapshot.outputSeq);
      const last = outputs[outputs.length - 1];
      if (!last) return restart(`${primary} has no outputs after ${held.outputSeq}`);
      const staged = await port.acceptOutputs(target, outputs);
      if (staged.status !== "ok") return restart(`${target} refused outputs (${staged.status})`);
      held.outputSeq = last.outputSeq;
      await pace(step, page.lsn);
    } else {
      const { id, chunks, lsn, outputSeq } = snapshot;
      const identity = { name: target, dataflowId: record.id, partition: route.partition, spec: record.spec };
      const done = await port.finishSeed(target, { ...identity, epoch, snapshotId: id, chunks, lsn, outputSeq });
      if (done.status !== "ok") return restart(`${target} could not install the snapshot (${done.status})`);
      recovery.phase = "catching-up";
      await save();
    }
  }
  return null;
}

/** Catching up: replays the survivor's log into the fresh replica, page by page, then attaches it. */
async function catchUp(step: Step, save: () => Promise<void>): Promise<Outcome> {
  const { port, route, recovery, restart } = step;
  const { epoch, primary } = route;
  const target = recovery.replica;
  let previous: { records: string }[] | null = null;
  while (recovery.phase === "catching-up" && step.spend()) {
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
    // Sized by the entries just copied, so one call applies about one chunk's work (`log-page.ts`).
    const toLsn = Math.min(survivor.lsn, fresh.lsn + logPageEntries(previous));
    const entries = await port.readLog(primary, epoch, fresh.lsn + 1, toLsn);
    if (!Array.isArray(entries)) return null;
    const last = entries[entries.length - 1];
    if (!last) return restart(`${primary} no longer holds LSN ${fresh.lsn + 1}`);
    const replayed = await port.replicate(target, { epoch, entries, upToLsn: last.lsn });
    if (replayed.status !== "ok" && replayed.status !== "gap") return restart(`${target} refused the log (${replayed.status})`);
    previous = entries;
    await pace(step, survivor.lsn);
  }
  return null;
}

/** Attached: copies what the primary logged alone, then marks the partition healthy. */
async function finishAttached({ port, route, recovery }: Step): Promise<Outcome> {
  const target = recovery.replica;
  const [primaryNow, standbyNow] = await Promise.all([port.probe(route.primary), port.probe(target)]);
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
