/**
 * Counting refused ingest requests (issue 13, for the dashboard): per minute, stream and
 * error code, over the last `REFUSAL_WINDOW_MS`. Bounded: past `MAX_REFUSAL_ROWS` rows a
 * minute's further streams are counted together under stream `*`.
 */
import type { RefusalCount } from "../wire/ingest-stats.ts";

/** How far back counts are kept and reported, ms (10 minutes). */
export const REFUSAL_WINDOW_MS = 10 * 60_000;

const MINUTE_MS = 60_000;
const MAX_REFUSAL_ROWS = 500;

/**
 * Adds one refusal at `nowMs` (epoch ms) and drops minutes older than the window.
 * @returns a new list; `counts` is not changed.
 */
export function addRefusal(counts: readonly RefusalCount[], stream: string, code: string, nowMs: number): RefusalCount[] {
  const minuteStartMs = Math.floor(nowMs / MINUTE_MS) * MINUTE_MS;
  const kept = recentRefusals(counts, nowMs).map((row) => ({ ...row }));
  const find = (name: string) => kept.find((row) => row.minuteStartMs === minuteStartMs && row.stream === name && row.code === code);
  const name = find(stream) || kept.length < MAX_REFUSAL_ROWS ? stream : "*";
  const row = find(name);
  if (row) row.count += 1;
  else kept.push({ minuteStartMs, stream: name, code, count: 1 });
  return kept;
}

/** The counts of minutes that started within the window before `nowMs`, oldest first. */
export function recentRefusals(counts: readonly RefusalCount[], nowMs: number): RefusalCount[] {
  return counts.filter((row) => row.minuteStartMs > nowMs - REFUSAL_WINDOW_MS).sort((a, b) => a.minuteStartMs - b.minuteStartMs);
}
