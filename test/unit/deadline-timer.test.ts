/** One timer for many deadlines (issue 12): exact firing, forgetting, re-arming, and how few timers it sets. */
import { describe, expect, it } from "vitest";
import { DeadlineTimer, type TimerClock } from "../../platform/deadline-timer.ts";

/** A fake clock: timers run when the test advances time past them. */
class FakeClock implements TimerClock {
  time = 1_000;
  timers: { at: number; run: () => void }[] = [];
  set = 0;
  now = () => this.time;
  setTimer = (run: () => void, ms: number) => {
    this.set += 1;
    const timer = { at: this.time + ms, run };
    this.timers.push(timer);
    return timer;
  };
  clearTimer = (handle: unknown) => {
    this.timers = this.timers.filter((t) => t !== handle);
  };
  /** Advances to `to`, running due timers in time order (the clock reads each timer's time while it runs). */
  advance(to: number): void {
    for (;;) {
      const next = this.timers.filter((t) => t.at <= to).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.timers.splice(this.timers.indexOf(next), 1);
      this.time = next.at;
      next.run();
    }
    this.time = to;
  }
}

describe("DeadlineTimer", () => {
  it("fires a deadline exactly when due, and not one that was forgotten", () => {
    const clock = new FakeClock();
    const timer = new DeadlineTimer(clock);
    const fired: string[] = [];
    timer.after(100, () => fired.push(`a@${clock.time}`));
    const forgetB = timer.after(50, () => fired.push(`b@${clock.time}`));
    timer.after(150, () => fired.push(`c@${clock.time}`));
    forgetB();
    clock.advance(1_099);
    expect(fired).toEqual([]);
    clock.advance(1_100);
    expect(fired).toEqual(["a@1100"]);
    clock.advance(2_000);
    expect(fired).toEqual(["a@1100", "c@1150"]);
    expect(timer.pending).toBe(0);
  });

  it("shares one armed timer among calls that follow each other closely", () => {
    const clock = new FakeClock();
    const timer = new DeadlineTimer(clock);
    // 100 calls, one every 5 ms, each answered after 3 ms, with a 600 ms deadline.
    for (let i = 0; i < 100; i++) {
      const forget = timer.after(600, () => {
        throw new Error("a met deadline fired");
      });
      clock.advance(clock.time + 3);
      forget();
      clock.advance(clock.time + 2);
    }
    expect(timer.pending).toBe(0);
    // 500 ms of calls fit under the first deadline: one timer, not a hundred.
    expect(clock.set).toBe(1);
    clock.advance(clock.time + 1_000);
    expect(clock.set).toBe(1);
  });

  it("re-arms for the next deadline after firing, and earlier for an earlier one", () => {
    const clock = new FakeClock();
    const timer = new DeadlineTimer(clock);
    const fired: number[] = [];
    timer.after(600, () => fired.push(clock.time));
    clock.advance(1_100);
    timer.after(600, () => fired.push(clock.time)); // due 1700
    timer.after(150, () => fired.push(clock.time)); // due 1250: an earlier timer
    clock.advance(3_000);
    expect(fired).toEqual([1_250, 1_600, 1_700]);
  });

  it("rejects a promise that misses its deadline and passes on one that settles", async () => {
    const clock = new FakeClock();
    const timer = new DeadlineTimer(clock);
    const late = timer.race(new Promise(() => {}), 100, "replica r (write)");
    const failed = timer.race(Promise.reject(new Error("down")), 100, "replica r (write)");
    await expect(timer.race(Promise.resolve(7), 100, "replica r (write)")).resolves.toBe(7);
    await expect(failed).rejects.toThrow("down");
    expect(timer.pending).toBe(1);
    clock.advance(1_100);
    await expect(late).rejects.toThrow("replica r (write) did not answer within 100 ms");
    expect(timer.pending).toBe(0);
  });

  it("arms one timer per round of short waits beside a far deadline, not one for each", () => {
    const clock = new FakeClock();
    const timer = new DeadlineTimer(clock);
    timer.after(1_000, () => {}); // a call's deadline
    let polls = 0;
    // Three waiting callers that poll every millisecond, re-registering after each poll.
    const poll = () =>
      timer.after(1, () => {
        polls += 1;
        if (polls < 300) poll();
      });
    for (let i = 0; i < 3; i++) poll();
    clock.advance(1_100);
    expect(polls).toBe(300);
    // The deadline's timer, then one per millisecond of polling (100 rounds of three).
    expect(clock.set).toBeLessThanOrEqual(1 + 100 + 1);
  });

  it("with clearWhenIdle, leaves no timer pending once no deadline waits, and still fires the ones that do", async () => {
    const clock = new FakeClock();
    const timer = new DeadlineTimer(clock, { clearWhenIdle: true });
    await expect(timer.race(Promise.resolve(1), 250, "replica r (probe)")).resolves.toBe(1);
    expect(clock.timers).toHaveLength(0);
    // Probes of one tick share one timer; the one that misses is rejected on time.
    const late = timer.race(new Promise(() => {}), 250, "replica a (probe)");
    const quick = timer.race(Promise.resolve(2), 250, "replica b (probe)");
    expect(clock.set).toBe(2);
    await quick;
    clock.advance(1_249);
    expect(timer.pending).toBe(1);
    clock.advance(1_250);
    await expect(late).rejects.toThrow("replica a (probe) did not answer within 250 ms");
    expect(clock.timers).toHaveLength(0);
    // Without the option, a met deadline's timer stays armed to serve the next call.
    const sharing = new DeadlineTimer(clock);
    await sharing.race(Promise.resolve(3), 250, "replica r (write)");
    expect(clock.timers).toHaveLength(1);
  });
});
