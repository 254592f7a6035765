/** Batches of at most 500 events and 512 KiB, cut 50 ms after their first event at the latest. */
export const DEFAULT_LIMITS = { maxBatchEvents: 500, maxBatchBytes: 512 * 1024, lingerMs: 50 };
