/**
 * A spread checkpoint's rows in SQLite (`shared/replica/checkpoint-steps.ts`): staged in
 * the `checkpoint` table itself, numbered after every row there and carrying their LSN,
 * which is above the stored checkpoint's; readers ask for the rows of the meta's
 * `checkpointLsn`, so staged rows are invisible until the step that completes the
 * checkpoint names their LSN and deletes the old rows, in one transaction. No row is
 * copied: per slice, one row inserted now and one deleted by the next checkpoint.
 */
import { piecesToRows } from "../shared/checkpoint/checkpoint-rows.ts";
import type { ReplicaEffects } from "../shared/replica/replica-state.ts";
import type { CountedSql } from "../platform/counted-sql.ts";

/**
 * Writes a step's checkpoint rows (inside its transaction): a whole checkpoint replaces
 * every row; part of a spread one is staged (`stageCheckpoint`).
 * @param storedLsn the `checkpointLsn` of the meta written in the same step.
 */
export function writeCheckpoint(sql: CountedSql, effects: ReplicaEffects, storedLsn: number, rowChars: number): void {
  if (effects.checkpoint) {
    const { lsn, pieces } = effects.checkpoint;
    sql.run("DELETE FROM checkpoint");
    piecesToRows(pieces, rowChars).forEach((row, i) => sql.run("INSERT INTO checkpoint (chunk, lsn, body) VALUES (?, ?, ?)", i, lsn, row));
  }
  if (effects.checkpointStage) stageCheckpoint(sql, effects.checkpointStage, storedLsn, rowChars);
}

function stageCheckpoint(sql: CountedSql, stage: NonNullable<ReplicaEffects["checkpointStage"]>, storedLsn: number, rowChars: number): void {
  // Rows of an unfinished earlier one (its memory lost in a restart) carry another LSN than the stored checkpoint's.
  if (stage.begin && !stage.complete) sql.run("DELETE FROM checkpoint WHERE lsn <> ?", storedLsn);
  const rows = piecesToRows(stage.pieces, rowChars);
  if (rows.length > 0) {
    const next = (sql.all<{ n: number | null }>("SELECT MAX(chunk) AS n FROM checkpoint")[0]?.n ?? -1) + 1;
    rows.forEach((row, i) => sql.run("INSERT INTO checkpoint (chunk, lsn, body) VALUES (?, ?, ?)", next + i, stage.lsn, row));
  }
  if (stage.complete) sql.run("DELETE FROM checkpoint WHERE lsn <> ?", stage.lsn);
}
