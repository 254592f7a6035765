/**
 * Retry timing for the client (pure): full-jitter exponential backoff (AWS's "Exponential
 * Backoff And Jitter"), never shorter than what the server asked for with `Retry-After`.
 */
export const DEFAULT_BACKOFF = { baseMs: 100, maxMs: 10000 };
/**
 * The wait before retry number `attempt` (0 for the first retry), ms.
 * @param random a uniform number in [0, 1)
 * @param retryAfterMs what the server asked for (`Retry-After`), or null: the wait is at least that
 */
export function backoffDelayMs(attempt, options, random, retryAfterMs = null) {
    const cap = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(attempt, 52));
    const jittered = Math.floor(random * cap);
    return retryAfterMs === null ? jittered : Math.max(retryAfterMs, jittered);
}
/**
 * Reads a `Retry-After` header: delay-seconds (`"1"`) or an HTTP date.
 * @returns ms to wait from `nowMs` (0 for a date in the past), or null when absent or unreadable
 */
export function parseRetryAfter(header, nowMs) {
    if (header === null)
        return null;
    const text = header.trim();
    if (/^\d{1,9}$/.test(text))
        return Number(text) * 1000;
    const at = Date.parse(text);
    return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}
