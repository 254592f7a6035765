/**
 * Turns a posted body into a list of events: a JSON array, or NDJSON (one JSON value
 * per line, blank lines ignored). Anything else is a 4xx naming where it broke.
 */
import { FluxError } from "../errors.ts";

/** Whether a content type asks for NDJSON parsing. */
export function isNdjson(contentType: string | undefined): boolean {
  const base = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  return base === "application/x-ndjson" || base === "application/ndjson" || base === "application/jsonl";
}

/**
 * Parses `body` into events. Throws `INVALID_JSON` with `details.line` (NDJSON, 1-based)
 * for malformed input, and `INVALID_REQUEST` when a JSON body is not an array.
 */
export function parseEventsBody(body: string, ndjson: boolean): unknown[] {
  if (!ndjson) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (err) {
      throw new FluxError("INVALID_JSON", `body is not valid JSON: ${describe(err)}`);
    }
    if (!Array.isArray(parsed)) {
      throw new FluxError("INVALID_REQUEST", "body must be a JSON array of events (or NDJSON with content-type application/x-ndjson)");
    }
    return parsed as unknown[];
  }
  const events: unknown[] = [];
  const lines = body.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? "").trim();
    if (line === "") continue;
    try {
      events.push(JSON.parse(line));
    } catch (err) {
      // The parser saw one line alone, so its own "(line 1 column N)" would name the wrong line.
      const why = describe(err).replace(/ \(line \d+ column \d+\)$/, "");
      throw new FluxError("INVALID_JSON", `NDJSON line ${i + 1} is not valid JSON: ${why}`, { line: i + 1 });
    }
  }
  return events;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
