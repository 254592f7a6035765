/** A first pass over an NDJSON file: every non-blank line must be JSON; counts lines, events and bytes. */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import { UsageError } from "./exit-codes.ts";

export interface NdjsonSummary {
  bytes: number;
  lines: number;
  events: number;
}

/** @throws UsageError naming the first line that is not a JSON object */
export async function scanNdjson(path: string): Promise<NdjsonSummary> {
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new UsageError(`cannot read ${path}`);
  }
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  let line = 0;
  let events = 0;
  for await (const text of lines) {
    line++;
    if (text.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new UsageError(`${path}:${line}: not JSON`);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new UsageError(`${path}:${line}: an event must be a JSON object`);
    events++;
  }
  return { bytes: info.size, lines: line, events };
}
