/**
 * Sliced checkpoints (issue 12, DESIGN.md §4): a replica's stable state as a header
 * (LSN, output count, dedup state, the operator's head) and slices of the operator's
 * keyed state, each its own JSON piece (`checkpoint-rows.ts`). `CheckpointBuilder`
 * rebuilds the state piece by piece, so a fresh replica restores one slice per seed call.
 */
import { z } from "zod";
import { compileDataflow } from "../operators/compile.ts";
import type { LiveOperator, SliceRestore } from "../operators/operator.ts";
import type { DataflowSpec } from "../wire/dataflow-spec.ts";
import { CheckpointSchema, DedupStateSchema, type DedupState } from "../wire/persisted.ts";
import { isPieceFormat, PieceReader } from "./checkpoint-rows.ts";
import { DownstreamProgressSchema, type DownstreamProgress } from "../wire/exchange.ts";
import { hasMoves, MoveStateSchema, noMoves, type MoveState } from "../keygroups/move-state.ts";

/** (window, key) entries per slice: a plain aggregate's slice is ~250k characters, a few ms to parse. */
export const KEYS_PER_SLICE = 5_000;

const CheckpointHeaderSchema = z.object({
  v: z.literal(2),
  lsn: z.number().int().min(0),
  outputSeq: z.number().int().min(0),
  dedup: DedupStateSchema,
  /** A stage's progress per upstream partition (issue 27); absent in checkpoints of older deploys and of dataflows fed by a stream. */
  sources: DownstreamProgressSchema.default({}),
  /** What key-group moves left (issue 28); absent in checkpoints of older deploys and of replicas no move touched. */
  moves: MoveStateSchema.optional(),
  /** The operator's head (`StateSlicing.split`), checked by the operator; its whole snapshot when `sliced` is false. */
  head: z.unknown(),
  sliced: z.boolean(),
  /** How many slice pieces follow the header. */
  slices: z.number().int().min(0),
});

/** A checkpoint rebuilt in memory: the operator bound to its restored state, and what it was taken at. */
export interface RestoredCheckpoint {
  lsn: number;
  outputSeq: number;
  dedup: DedupState;
  sources: DownstreamProgress;
  moves: MoveState;
  operator: LiveOperator;
  /** Its size, characters of its pieces (as the replica that took it counted them; rows add framing): the next checkpoint waits for a quarter of that in new log. */
  chars: number;
}

/** What a checkpoint's header holds besides the operator's head. */
interface CheckpointProgress {
  lsn: number;
  outputSeq: number;
  dedup: DedupState;
  sources: DownstreamProgress;
  moves?: MoveState | undefined;
}

/** The header piece of a checkpoint, serialized now (the next step mutates the state it names). */
export function checkpointHeader(progress: CheckpointProgress, head: unknown, sliced: boolean, slices: number): string {
  const { lsn, outputSeq, dedup, sources, moves } = progress;
  // `sources` only when a stage has any and `moves` only once a move touched the replica, so other headers are as before.
  const extra = { ...(Object.keys(sources).length > 0 ? { sources } : {}), ...(moves && hasMoves(moves) ? { moves } : {}) };
  return JSON.stringify({ v: 2, lsn, outputSeq, dedup, ...extra, head, sliced, slices });
}

/** The pieces of a checkpoint of `operator` as of `lsn`: header first, then the slices (`sources`: a stage's progress; `moves`: what key-group moves left). */
export function checkpointPieces(lsn: number, outputSeq: number, dedup: DedupState, operator: LiveOperator, perSlice: number, sources: DownstreamProgress = {}, moves?: MoveState): string[] {
  const { head, slices, sliced } = operator.split(perSlice);
  return [checkpointHeader({ lsn, outputSeq, dedup, sources, moves }, head, sliced, slices.length), ...slices];
}

/** Rebuilds a checkpoint from its stored rows, either format (none: null). Throws if they are malformed or incomplete. */
export function restoreCheckpoint(spec: DataflowSpec, rows: readonly string[]): RestoredCheckpoint | null {
  const first = rows[0];
  if (first === undefined) return null;
  if (!isPieceFormat(first)) {
    const body = rows.join("");
    const { lsn, outputSeq, dedup, operator } = CheckpointSchema.parse(JSON.parse(body));
    return { lsn, outputSeq, dedup, sources: {}, moves: noMoves(), operator: compileDataflow(spec).bind(operator), chars: body.length };
  }
  const builder = new CheckpointBuilder(spec);
  for (const row of rows) builder.push(row);
  return builder.finish();
}

/** Rebuilds a format-2 checkpoint from its rows, pushed in order. */
export class CheckpointBuilder {
  readonly #spec: DataflowSpec;
  readonly #reader = new PieceReader();
  #header: z.infer<typeof CheckpointHeaderSchema> | null = null;
  #restore: SliceRestore | null = null;
  #slices = 0;
  #chars = 0;

  constructor(spec: DataflowSpec) {
    this.#spec = spec;
  }

  /** Takes the next row, parsing and restoring the piece it completes. Throws if it is malformed. */
  push(row: string): void {
    const piece = this.#reader.push(row);
    if (piece === null) return;
    // The pieces' characters, as the replica that wrote them counted them (rows add their framing).
    this.#chars += piece.length;
    const value: unknown = JSON.parse(piece);
    if (!this.#header || !this.#restore) {
      this.#header = CheckpointHeaderSchema.parse(value);
      this.#restore = compileDataflow(this.#spec).restoreSliced(this.#header.head, this.#header.sliced);
      return;
    }
    if (this.#slices >= this.#header.slices) throw new Error(`checkpoint: more than the ${this.#header.slices} slices its header announces`);
    this.#restore.add(value);
    this.#slices += 1;
  }

  /** The restored checkpoint; throws unless every piece the header announces was pushed. */
  finish(): RestoredCheckpoint {
    const header = this.#header;
    if (!header || !this.#restore || this.#slices !== header.slices || this.#reader.partial) {
      throw new Error(`checkpoint incomplete: ${this.#slices} of ${header?.slices ?? "?"} slices`);
    }
    const { lsn, outputSeq, dedup, sources } = header;
    return { lsn, outputSeq, dedup, sources, moves: header.moves ?? noMoves(), operator: this.#restore.finish(), chars: this.#chars };
  }
}
