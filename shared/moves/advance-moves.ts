/**
 * The monitor's share of moves in one tick (issue 28): every move in the record is
 * advanced in turn (`advance-move.ts`), and each that ends leaves an event on the status
 * page naming its groups and how long their records waited (from the release to the switch).
 */
import { MAX_EVENTS, type DataflowRecord, type KeyGroupMove } from "../wire/routing.ts";
import { advanceMove, type MoveDriver } from "./advance-move.ts";

/**
 * Moves one tick advances at most, in the record's order: a rescale queues many, and a
 * tick stays short so probing (and fail-over) never waits long behind them.
 */
const MOVES_PER_TICK = 2;

/** Advances the first {@link MOVES_PER_TICK} of `record.moves` as far as each goes now, saving after each phase. */
export async function advanceMoves(record: DataflowRecord, driver: MoveDriver): Promise<void> {
  for (const move of record.moves.slice(0, MOVES_PER_TICK)) {
    const save = async () => {
      // The event goes into the same save that takes the move out of the record.
      if (!record.moves.includes(move)) noteEnded(record, move, driver.now());
      await driver.save();
    };
    await advanceMove(record, move, { ...driver, save });
  }
}

function noteEnded(record: DataflowRecord, move: KeyGroupMove, nowMs: number): void {
  const groups = `key group${move.groups.length === 1 ? "" : "s"} ${move.groups.join(", ")}`;
  const finished = move.switchedAtMs !== null;
  const paused = move.releasedAtMs === null ? 0 : (move.switchedAtMs ?? nowMs) - move.releasedAtMs;
  const detail = finished
    ? `move ${move.id}: ${groups} moved from partition ${move.from} to ${move.to}; their records waited ${paused} ms`
    : `move ${move.id}: ${groups} stay on partition ${move.from} (not moved to ${move.to}: ${move.failure ?? "given up"}); their records waited ${paused} ms`;
  record.events.push({ atMs: nowMs, partition: move.from, kind: finished ? "move-finished" : "move-given-up", detail });
  if (record.events.length > MAX_EVENTS) record.events.splice(0, record.events.length - MAX_EVENTS);
}
