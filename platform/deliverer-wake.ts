/**
 * Wakes a replica's deliverer (issue 27, `shared/stages/deliverer.ts`): an in-memory timer
 * for the wake-up asked for, so a paced delivery a few milliseconds away costs no storage
 * write, and the object's alarm a little later as a backstop, should the object be evicted
 * before its timer fires. An alarm asked for while the alarm handler runs is armed once it
 * has returned (the runtime cancels a running handler's own rescheduling otherwise).
 */

/** How long after a wake-up the backstop alarm fires, ms. */
const ALARM_BACKSTOP_MS = 1_000;

export class DelivererWake {
  readonly #kick: () => Promise<unknown>;
  readonly #setAlarm: (atMs: number) => Promise<void>;
  #timer: { atMs: number; handle: ReturnType<typeof setTimeout> } | null = null;
  #alarmAtMs: number | null = null;
  #inAlarm = false;

  /** @param kick runs the deliverer (through the object's fault gate); its failure is the object being down. */
  constructor(kick: () => Promise<unknown>, setAlarm: (atMs: number) => Promise<void>) {
    this.#kick = kick;
    this.#setAlarm = setAlarm;
  }

  /** Wakes the deliverer at `atMs` at the latest (an earlier timer stands). */
  wakeAt(atMs: number): void {
    const now = Date.now();
    if (!this.#timer || atMs < this.#timer.atMs) {
      if (this.#timer) clearTimeout(this.#timer.handle);
      const handle = setTimeout(() => {
        this.#timer = null;
        void this.#kick().catch(() => undefined);
      }, Math.max(0, atMs - now));
      this.#timer = { atMs, handle };
    }
    if (this.#alarmAtMs !== null && this.#alarmAtMs > now) return;
    const backstop = Math.max(atMs, now) + ALARM_BACKSTOP_MS;
    this.#alarmAtMs = backstop;
    const arm = () => void this.#setAlarm(backstop).catch((err: unknown) => console.error("replica: could not arm its alarm", err));
    if (this.#inAlarm) setTimeout(arm, 0);
    else arm();
  }

  /** The object's alarm fired: runs the deliverer, arming any wake-up it asks for only after. */
  async alarmFired(): Promise<void> {
    this.#alarmAtMs = null;
    this.#inAlarm = true;
    try {
      await this.#kick();
    } finally {
      this.#inAlarm = false;
    }
  }
}
