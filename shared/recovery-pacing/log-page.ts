/**
 * How many log entries recovery's catch-up copies per call (issue 12). Entries differ in
 * size by orders of magnitude (a 2,000-event fill batch against a 10-event one), and the
 * fresh replica applies a page in one step, so a page is sized by the characters of the
 * entries just copied: about `PAGE_CHARS` of records per call, like one seed chunk's work.
 */

/** Records' characters one catch-up call should carry (~3,000 small events). */
const PAGE_CHARS = 131_072;
/** Entries in the first page of a tick, before any size is known. */
const FIRST_PAGE = 8;
/** Most entries in one page. */
const MAX_PAGE = 200;

/**
 * The number of entries to ask for next, ≥ 1.
 * @param previous the entries the last call of this catch-up copied (null: none yet).
 */
export function logPageEntries(previous: readonly { records: string }[] | null): number {
  if (!previous || previous.length === 0) return FIRST_PAGE;
  const meanChars = previous.reduce((n, entry) => n + entry.records.length, 0) / previous.length;
  return Math.max(1, Math.min(MAX_PAGE, Math.floor(PAGE_CHARS / Math.max(1, meanChars))));
}
