/**
 * How a checkpoint is stored and copied (issue 12): as rows of text of at most `rowChars`
 * UTF-16 units. Format 2 is a sequence of pieces, each a JSON text: a header, then one
 * piece per slice of operator state. A row starts with "." when it ends its piece and with
 * "+" when the piece goes on in the next row, so a reader parses each piece as soon as
 * its last row arrives. Format 1 (stored before issue 12) is one JSON text cut anywhere;
 * its first row starts with `{"v":1`, never with a piece marker.
 */
import { chunkText } from "./chunk-text.ts";

const CONTINUES = "+";
const ENDS = ".";

/** Rows holding `pieces` in order (`rowChars` ≥ 3). */
export function piecesToRows(pieces: readonly string[], rowChars: number): string[] {
  const rows: string[] = [];
  for (const piece of pieces) {
    const parts = chunkText(piece, rowChars - 1);
    parts.forEach((part, i) => rows.push((i === parts.length - 1 ? ENDS : CONTINUES) + part));
  }
  return rows;
}

/** Whether stored rows are format 2 (pieces), judged by the first row. */
export function isPieceFormat(firstRow: string): boolean {
  return firstRow.startsWith(ENDS) || firstRow.startsWith(CONTINUES);
}

/** Reassembles pieces from rows pushed in order. */
export class PieceReader {
  #buffer = "";

  /** The piece this row completes, or null when the piece goes on. */
  push(row: string): string | null {
    const marker = row[0];
    if (marker !== ENDS && marker !== CONTINUES) throw new Error("checkpoint row: no piece marker");
    const text = this.#buffer + row.slice(1);
    this.#buffer = marker === CONTINUES ? text : "";
    return marker === CONTINUES ? null : text;
  }

  /** Whether a piece was started and not finished. */
  get partial(): boolean {
    return this.#buffer.length > 0;
  }
}
