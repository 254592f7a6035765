/** How far back counts are kept and reported, ms (10 minutes). */
export const REFUSAL_WINDOW_MS = 10 * 60000;
const MINUTE_MS = 60000;
const MAX_REFUSAL_ROWS = 500;
/**
 * Adds one refusal at `nowMs` (epoch ms) and drops minutes older than the window.
 * @returns a new list; `counts` is not changed.
 */
export function addRefusal(counts, stream, code, nowMs) {
    const minuteStartMs = Math.floor(nowMs / MINUTE_MS) * MINUTE_MS;
    const kept = recentRefusals(counts, nowMs).map((row) => ({ ...row }));
    const find = (name) => kept.find((row) => row.minuteStartMs === minuteStartMs && row.stream === name && row.code === code);
    const name = find(stream) || kept.length < MAX_REFUSAL_ROWS ? stream : "*";
    const row = find(name);
    if (row)
        row.count += 1;
    else
        kept.push({ minuteStartMs, stream: name, code, count: 1 });
    return kept;
}
/** The counts of minutes that started within the window before `nowMs`, oldest first. */
export function recentRefusals(counts, nowMs) {
    return counts.filter((row) => row.minuteStartMs > nowMs - REFUSAL_WINDOW_MS).sort((a, b) => a.minuteStartMs - b.minuteStartMs);
}
