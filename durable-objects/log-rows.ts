/**
 * The text of one log row (issue 12: CPU per event). Rows are written in the second form
 * (`LogRowHeadSchema`): a one-line JSON head, then the records texts as they arrived, so
 * writing costs a concatenation and reading a slice per entry, with no escaping. Rows of
 * the first form (`LogGroupSchema`, one JSON document) written by an earlier deploy still load.
 */
import { LogGroupSchema, LogRowHeadSchema, type LogEntry } from "../shared/wire/persisted.ts";

/** The row text for consecutive entries (any count ≥ 1). */
export function encodeLogRow(entries: readonly LogEntry[]): string {
  const head = JSON.stringify({ v: 2, entries: entries.map((e) => [e.producer, e.seq, e.records.length]) });
  let records = "";
  for (const e of entries) records += e.records;
  // JSON.stringify never writes a raw newline, so the first one ends the head.
  return `${head}\n${records}`;
}

/** The entries of a row whose first entry has `firstLsn`, in LSN order. Throws on a row that does not add up. */
export function decodeLogRow(firstLsn: number, body: string): LogEntry[] {
  const newline = body.indexOf("\n");
  if (newline < 0) {
    return LogGroupSchema.parse(JSON.parse(body)).entries.map(([producer, seq, records], i) => ({ lsn: firstLsn + i, producer, seq, records }));
  }
  const head = LogRowHeadSchema.parse(JSON.parse(body.slice(0, newline)));
  let at = newline + 1;
  const entries = head.entries.map(([producer, seq, length], i) => {
    const records = body.slice(at, at + length);
    at += length;
    return { lsn: firstLsn + i, producer, seq, records };
  });
  if (at !== body.length) throw new Error(`log row at LSN ${firstLsn} holds ${body.length - newline - 1} characters of records, its head names ${at - newline - 1}`);
  return entries;
}
