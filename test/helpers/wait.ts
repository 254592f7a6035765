/** Waiting for something eventually true, always with a deadline (STYLE.md §9: every wait has one). */

/**
 * Polls `check` every `everyMs` until it returns a value other than null, and returns it.
 * @throws Error naming `what` when `withinMs` passes first.
 */
export async function waitFor<T>(check: () => Promise<T | null>, withinMs: number, what = "the condition", everyMs = 50): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (Date.now() >= deadline) throw new Error(`${what} did not hold within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
