/**
 * Drives one key-group move forward (issue 28), as the monitor drives a recovery: each
 * phase is recorded (saved) before the step it names is sent, and every step is idempotent
 * on the replicas (`move-step.ts`), so alarms delivered twice and a monitor restarted
 * half-way do no harm.
 *
 * 1. release: the source primary logs the release; once stable (on both its replicas) it
 *    answers with what it took. Its records of the groups wait from then on.
 * 2. adopt: the target primary logs the adoption of that state; answered once stable.
 * 3. switch: the record's owners send the groups to the target, and both partitions'
 *    epochs rise, so a router holding the old table is refused by either pair and reloads.
 * 4. forget: the source drops what it released (the target holds it on both replicas).
 * A move whose target pair is unavailable before the adopt is sent is given up (`return`:
 * the source takes its state back), so a fault either finishes the move or leaves the old
 * placement as it was; once the adopt may have been applied the move waits for the target
 * instead (a target that refuses the adopt logged nothing, and the move is given up too).
 * What a release took is kept in the monitor's memory only; after a restart the release is
 * sent again, and the source answers with the same state.
 */
import type { DataflowRecord, KeyGroupMove, PartitionRoute } from "../wire/routing.ts";
import { keyGroupMapOf, ownerOf } from "../keygroups/key-groups.ts";
import type { MoveStep } from "../keygroups/move-entries.ts";
import type { MoveStepReply, MoveStepRequest, Released } from "./move-step.ts";

/** How the monitor reaches a primary for a move step; a call that fails rejects. */
export interface MovePort {
  moveStep(name: string, msg: MoveStepRequest): Promise<MoveStepReply>;
}

/** What each release took, by move, as the monitor remembers it between ticks. */
export type ReleasedMemo = Map<number, Released>;

/** What driving a move works with besides the record. */
export interface MoveDriver {
  port: MovePort;
  memo: ReleasedMemo;
  /** The current time: stamps the release and the switch, so the time between them is how long the groups' records waited. */
  now: () => number;
  /** Stores the record (a failure ends the tick). */
  save: () => Promise<void>;
  /** Tells the replicas of `routes` their new epoch after a switch, so the forget (and the next move) need not wait for the monitor's next reconciliation. */
  reconfigure: (routes: readonly PartitionRoute[]) => Promise<void>;
  /** Whether `replica` answered the tick's probe: a move waits for a pair whose primary did not, whose calls would hold the tick (and a takeover) back. */
  answered: (replica: string) => boolean;
}

/** Where a move stands after a call: still under way, finished, or given up (why). */
export type MoveProgress = { state: "waiting"; why: string } | { state: "finished" } | { state: "given-up"; why: string };

/**
 * Advances `move` (one of `record.moves`) as far as it goes now, saving the record after
 * each phase change; a finished or given-up move leaves `record.moves`.
 */
export async function advanceMove(record: DataflowRecord, move: KeyGroupMove, driver: MoveDriver): Promise<MoveProgress> {
  const { port, memo, now, save } = driver;
  const from = routeOf(record, move.from);
  const to = routeOf(record, move.to);
  const of = keyGroupMapOf(record).groups;
  const send = async (route: PartitionRoute, step: MoveStep): Promise<MoveStepReply> => {
    try {
      return await port.moveStep(route.primary, { epoch: route.epoch, step });
    } catch (err) {
      return { status: "unconfirmed", reason: err instanceof Error ? err.message : String(err) };
    }
  };
  const end = async (progress: MoveProgress): Promise<MoveProgress> => {
    record.moves = record.moves.filter((m) => m.id !== move.id);
    memo.delete(move.id);
    await save();
    return progress;
  };
  const enter = async (phase: KeyGroupMove["phase"]): Promise<void> => {
    move.phase = phase;
    await save();
  };
  for (;;) {
    // Only before an adopt was sent: once it may have been applied, the target may hold the groups too, and giving up would leave them twice.
    if (move.phase === "release" && to.status === "unavailable") {
      move.failure = `partition ${move.to} became unavailable before the move finished`;
      await enter("return");
    }
    const silent = [from, to].find((route) => !driver.answered(route.primary));
    if (silent) return { state: "waiting", why: `primary ${silent.primary} of partition ${silent.partition} did not answer the last probe` };
    // Not released while either pair recovers: the switch would wait for it, and the groups' posts with it.
    const recovering = move.phase === "release" ? [from, to].find((route) => route.recovery !== null) : undefined;
    if (recovering) return { state: "waiting", why: `partition ${recovering.partition} is recovering` };
    if (move.phase === "release" || (move.phase === "adopt" && !memo.has(move.id))) {
      if (from.status === "unavailable") return { state: "waiting", why: `partition ${move.from} is unavailable` };
      const reply = await send(from, { kind: "release", move: move.id, of, groups: move.groups });
      if (reply.status === "refused") {
        move.failure = reply.reason;
        return end({ state: "given-up", why: reply.reason });
      }
      if (reply.status !== "ok" || !reply.released) return { state: "waiting", why: `release on ${from.primary}: ${describe(reply)}` };
      memo.set(move.id, reply.released);
      if (move.phase === "release") {
        move.releasedAtMs = now();
        await enter("adopt");
      }
      continue;
    }
    if (move.phase === "adopt") {
      const released = memo.get(move.id);
      if (!released) continue;
      const reply = await send(to, { kind: "adopt", move: move.id, of, groups: move.groups, taken: released.taken, judges: released.judges });
      if (reply.status === "refused") {
        move.failure = reply.reason;
        await enter("return");
        continue;
      }
      if (reply.status !== "ok") return { state: "waiting", why: `adopt on ${to.primary}: ${describe(reply)}` };
      await enter("switch");
      continue;
    }
    if (move.phase === "switch") {
      const busy = [from, to].find((r) => r.recovery !== null || r.status === "unavailable");
      if (busy) return { state: "waiting", why: `partition ${busy.partition} is ${busy.recovery ? "recovering" : busy.status}` };
      switchOwners(record, move);
      for (const route of [from, to]) {
        route.epoch += 1;
        route.version += 1;
      }
      move.switchedAtMs = now();
      await enter("forget");
      await driver.reconfigure([from, to]);
      continue;
    }
    const kind = move.phase === "forget" ? "forget" : "return";
    if (from.status === "unavailable") return { state: "waiting", why: `partition ${move.from} is unavailable` };
    const reply = await send(from, { kind, move: move.id });
    // Refused: the source holds nothing of this move (a release that never applied).
    if (reply.status !== "ok" && reply.status !== "refused") return { state: "waiting", why: `${kind} on ${from.primary}: ${describe(reply)}` };
    return end(kind === "forget" ? { state: "finished" } : { state: "given-up", why: move.failure ?? "given up" });
  }
}

/** Gives `move`'s groups to its target in the record's table (a table stored before issue 28 gets its owners written out). */
function switchOwners(record: DataflowRecord, move: KeyGroupMove): void {
  const map = keyGroupMapOf(record);
  const owners = Array.from({ length: map.groups }, (_, g) => ownerOf(map, g));
  for (const g of move.groups) owners[g] = move.to;
  record.keyGroups = { groups: map.groups, owners };
}

function routeOf(record: DataflowRecord, partition: number): PartitionRoute {
  const route = record.routes[partition];
  if (!route) throw new RangeError(`dataflow '${record.id}' has no partition ${partition}`);
  return route;
}

function describe(reply: MoveStepReply): string {
  return "reason" in reply ? reply.reason : reply.status;
}
