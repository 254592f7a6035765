/** The router's write coalescer (issue 12): its flush rule, its bounds, and per-caller outcomes. */
import { describe, expect, it } from "vitest";
import { WriteCoalescer, type After, type CoalescerOptions } from "../../shared/router/write-coalescer.ts";
import type { ReplicaPort } from "../../shared/router/write-partition.ts";
import type { Write, WriteReply } from "../../shared/wire/replica-rpc.ts";

/** A primary whose calls are held until released; each batch is answered with its seq as LSN. */
class HeldPrimary implements ReplicaPort {
  readonly calls: { msg: Write; release(fail?: boolean): void }[] = [];
  write(_name: string, msg: Write): Promise<WriteReply> {
    return new Promise((resolve, reject) =>
      this.calls.push({
        msg,
        release: (fail) =>
          fail ? reject(new Error("primary down")) : resolve({ status: "ok", results: msg.batches.map((b) => ({ status: "applied", lsn: b.seq, replicated: true, late: 0 })) }),
      }),
    );
  }
}

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
const options = (overrides: Partial<CoalescerOptions> = {}): CoalescerOptions => ({ maxBatches: 64, maxChars: 1_000_000, giveUpMs: 10_000, staleMs: 5_000, lingerMs: 0, ...overrides });
/** A caller's timer that fires only when the test says so; records what was armed and what was cancelled. */
class HeldTimers {
  readonly armed: { ms: number; fire(): void; cancelled: boolean }[] = [];
  readonly after: After = (ms, fire) => {
    const timer = { ms, fire, cancelled: false };
    this.armed.push(timer);
    return () => void (timer.cancelled = true);
  };
  /** Fires every live timer of `ms` armed so far. */
  fire(ms: number): void {
    for (const t of this.armed.filter((a) => a.ms === ms && !a.cancelled)) (t.cancelled = true), t.fire();
  }
  live(): number[] {
    return this.armed.filter((t) => !t.cancelled).map((t) => t.ms);
  }
}
/** A caller's timer that never fires. */
const never: After = () => undefined;
const batch = (seq: number, records = "[]") => ({ producer: "p", seq, records });
const sizes = (primary: HeldPrimary) => primary.calls.map((c) => c.msg.batches.map((b) => b.seq));
describe("WriteCoalescer", () => {
  it("sends a batch at once when nothing is in flight, and the rest together once that call ends", async () => {
    const primary = new HeldPrimary();
    const coalescer = new WriteCoalescer(options());
    const send = coalescer.sendVia(primary, never);
    const replies = [1, 2, 3, 4].map((seq) => send("p0", 1, batch(seq)));
    await tick();
    expect(sizes(primary)).toEqual([[1]]);
    primary.calls[0]?.release();
    for (let i = 0; i < 3; i++) await tick();
    expect(sizes(primary)).toEqual([[1], [2, 3, 4]]);
    primary.calls[1]?.release();
    expect((await Promise.all(replies)).map((r) => r.status === "ok" && r.results)).toEqual([1, 2, 3, 4].map((lsn) => [{ status: "applied", lsn, replicated: true, late: 0 }]));
  });

  it("sends a group that reaches its bound in batches or characters at once", async () => {
    const primary = new HeldPrimary();
    const send = new WriteCoalescer(options({ maxBatches: 3, maxChars: 10 })).sendVia(primary, never);
    const replies = [1, 2, 3, 4, 5, 6, 7].map((seq) => send("p0", 1, batch(seq)));
    for (let i = 0; i < 5; i++) await tick();
    expect(sizes(primary)).toEqual([[1], [2, 3, 4], [5, 6, 7]]);
    const wide = new HeldPrimary();
    const sendWide = new WriteCoalescer(options({ maxChars: 10 })).sendVia(wide, never);
    const more = [1, 2, 3, 4].map((seq) => sendWide("p0", 1, batch(seq, "123456")));
    for (let i = 0; i < 5; i++) await tick();
    // 2 and 3 each fill a group (two would exceed 10 characters); 4 alone does not, so it waits.
    expect(sizes(wide)).toEqual([[1], [2], [3]]);
    for (const c of [...primary.calls, ...wide.calls]) c.release();
    for (let i = 0; i < 5; i++) await tick();
    expect(sizes(wide)).toEqual([[1], [2], [3], [4]]);
    wide.calls[3]?.release();
    await Promise.all([...replies, ...more]);
  });

  it("keeps primaries and epochs apart, and fails every caller of a call that failed", async () => {
    const primary = new HeldPrimary();
    const coalescer = new WriteCoalescer(options());
    const send = coalescer.sendVia(primary, never);
    const a = send("p0", 1, batch(1));
    const b = send("p1", 1, batch(2));
    const c = send("p0", 2, batch(3));
    await tick();
    expect(sizes(primary)).toEqual([[1], [2], [3]]);
    const waiting = [send("p0", 1, batch(4)), send("p0", 1, batch(5))];
    primary.calls[0]?.release();
    for (let i = 0; i < 3; i++) await tick();
    primary.calls[3]?.release(true);
    await expect(Promise.all(waiting.map((p) => p.then(() => "ok", (err: Error) => err.message)))).resolves.toEqual(["primary down", "primary down"]);
    for (const call of primary.calls.slice(1, 3)) call.release();
    await Promise.all([a, b, c]);
  });

  it("wakes waiting callers when the call ends, on no timer; a batch sent at once arms none", async () => {
    const primary = new HeldPrimary();
    const timers = new HeldTimers();
    const send = new WriteCoalescer(options()).sendVia(primary, timers.after);
    const first = send("p0", 1, batch(1));
    await tick();
    expect(timers.armed).toHaveLength(0);
    const waiting = [2, 3].map((seq) => send("p0", 1, batch(seq)));
    await tick();
    // Each waiting caller arms its give-up once; the first in line also watches for a stale call.
    expect(timers.live().sort((a, b) => a - b)).toEqual([5_000, 10_000, 10_000]);
    primary.calls[0]?.release();
    await first;
    await tick();
    expect(sizes(primary)).toEqual([[1], [2, 3]]);
    primary.calls[1]?.release();
    await Promise.all(waiting);
    expect(timers.live()).toEqual([]); // every timer of an answered caller is cancelled
  });

  it("sends past a call lost with its request (never answered) once no call started for staleMs", async () => {
    const primary = new HeldPrimary();
    const timers = new HeldTimers();
    const coalescer = new WriteCoalescer(options({ staleMs: 3, giveUpMs: 10 }));
    // The first caller's request is gone: its call is never answered.
    void coalescer.sendVia(primary, never)("p0", 1, batch(1));
    const second = coalescer.sendVia(primary, timers.after)("p0", 1, batch(2));
    await tick();
    expect(sizes(primary)).toEqual([[1]]);
    timers.fire(3);
    await tick();
    expect(sizes(primary)).toEqual([[1], [2]]);
    primary.calls[1]?.release();
    expect(await second).toEqual({ status: "ok", results: [{ status: "applied", lsn: 2, replicated: true, late: 0 }] });
    // The lane is free again: a later batch goes at once, and the lost call answering late changes nothing.
    primary.calls[0]?.release();
    const third = coalescer.sendVia(primary, timers.after)("p0", 1, batch(3));
    await tick();
    expect(sizes(primary)).toEqual([[1], [2], [3]]);
    primary.calls[2]?.release();
    await third;
  });

  it("fails a caller that waited for longer than its give-up time, and the others still go", async () => {
    const primary = new HeldPrimary();
    const timers = new HeldTimers();
    const send = new WriteCoalescer(options({ giveUpMs: 2 })).sendVia(primary, timers.after);
    const first = send("p0", 1, batch(1));
    const second = send("p0", 1, batch(2)).catch((err: Error) => err.message);
    await tick();
    timers.fire(2);
    await expect(second).resolves.toBe("write to p0 not sent within 2 ms (coalescer)");
    const third = send("p0", 1, batch(3));
    primary.calls[0]?.release();
    await first;
    await tick();
    expect(sizes(primary)).toEqual([[1], [3]]);
    primary.calls[1]?.release();
    await third;
  });

  it("lets a batch for an idle primary wait while other requests are in progress, never for its own", async () => {
    const primary = new HeldPrimary();
    const timers = new HeldTimers();
    const coalescer = new WriteCoalescer(options({ lingerMs: 2 }));
    // A request alone in the isolate: its batch goes at once (low load never waits).
    const own = coalescer.enter();
    const alone = coalescer.sendVia(primary, timers.after, own)("p0", 1, batch(1));
    await tick();
    expect(sizes(primary)).toEqual([[1]]);
    primary.calls[0]?.release();
    await alone;
    own.leave();
    // Two other requests are in progress: a batch for the idle primary waits for them.
    const a = coalescer.enter();
    const b = coalescer.enter();
    const first = coalescer.sendVia(primary, timers.after)("p0", 1, batch(2));
    await tick();
    expect(sizes(primary)).toEqual([[1]]);
    a.leave();
    a.leave(); // leaving twice counts once
    const second = coalescer.sendVia(primary, timers.after, b)("p0", 1, batch(3));
    await tick();
    expect(sizes(primary)).toEqual([[1]]); // b is still in progress
    b.leave(); // the last other request leaves: the lingering batch goes at once, with b's
    await tick();
    expect(sizes(primary)).toEqual([[1], [2, 3]]);
    primary.calls[1]?.release();
    await Promise.all([first, second]);
  });

  it("stops lingering after lingerMs even while another request is in progress", async () => {
    const primary = new HeldPrimary();
    const timers = new HeldTimers();
    const coalescer = new WriteCoalescer(options({ lingerMs: 2 }));
    const other = coalescer.enter();
    const reply = coalescer.sendVia(primary, timers.after)("p0", 1, batch(1));
    await tick();
    expect(sizes(primary)).toEqual([]);
    timers.fire(2);
    await tick();
    expect(sizes(primary)).toEqual([[1]]);
    primary.calls[0]?.release();
    await reply;
    other.leave();
  });

  it("sends batches that waited behind a call as soon as it ends, without lingering for requests in progress", async () => {
    const primary = new HeldPrimary();
    const timers = new HeldTimers();
    const coalescer = new WriteCoalescer(options({ lingerMs: 2 }));
    const other = coalescer.enter();
    const first = coalescer.sendVia(primary, timers.after)("p0", 1, batch(1));
    timers.fire(2);
    await tick();
    expect(sizes(primary)).toEqual([[1]]);
    const behind = [2, 3].map((seq) => coalescer.sendVia(primary, timers.after)("p0", 1, batch(seq)));
    await tick();
    primary.calls[0]?.release();
    await first;
    await tick();
    expect(sizes(primary)).toEqual([[1], [2, 3]]); // no linger timer fired: they went when the call ended
    primary.calls[1]?.release();
    await Promise.all(behind);
    other.leave();
  });

  it("stops counting a request in progress for longer than staleMs (its handler never finished), so sends no longer linger for it", async () => {
    const primary = new HeldPrimary();
    const timers = new HeldTimers();
    let now = 0;
    const coalescer = new WriteCoalescer(options({ lingerMs: 2, staleMs: 100, now: () => now }));
    coalescer.enter(); // never leaves
    const waits = coalescer.sendVia(primary, timers.after)("p0", 1, batch(1));
    await tick();
    expect(sizes(primary)).toEqual([]); // it lingers for the other request
    timers.fire(2);
    await tick();
    expect(sizes(primary)).toEqual([[1]]);
    primary.calls[0]?.release();
    await waits;
    now = 101;
    const alone = coalescer.sendVia(primary, timers.after)("p0", 1, batch(2));
    await tick();
    expect(sizes(primary)).toEqual([[1], [2]]); // the lost request no longer counts: it goes at once
    primary.calls[1]?.release();
    await alone;
  });
});
