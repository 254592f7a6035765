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
const options = (overrides: Partial<CoalescerOptions> = {}): CoalescerOptions => ({ maxBatches: 64, maxChars: 1_000_000, pollMs: 1, giveUpMs: 10_000, staleMs: 5_000, lingerPolls: 0, ...overrides });
/** A caller's timer that fires only when the test says so; records what was armed. */
class HeldTimers {
  readonly armed: { ms: number; fire(): void }[] = [];
  readonly after: After = (ms, fire) => void this.armed.push({ ms, fire });
}
/** Fires every timer armed so far (each caller's next poll). */
const fireAll = (timers: HeldTimers) => timers.armed.splice(0).forEach((t) => t.fire());
/** A caller's timer on which every poll waits one macrotask. */
const soon: After = (_ms, fire) => void setTimeout(fire, 0);
const batch = (seq: number, records = "[]") => ({ producer: "p", seq, records });
const sizes = (primary: HeldPrimary) => primary.calls.map((c) => c.msg.batches.map((b) => b.seq));

describe("WriteCoalescer", () => {
  it("sends a batch at once when nothing is in flight, and the rest together once that call ends", async () => {
    const primary = new HeldPrimary();
    const coalescer = new WriteCoalescer(options());
    const send = coalescer.sendVia(primary, soon);
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
    const send = new WriteCoalescer(options({ maxBatches: 3, maxChars: 10 })).sendVia(primary, soon);
    const replies = [1, 2, 3, 4, 5, 6, 7].map((seq) => send("p0", 1, batch(seq)));
    for (let i = 0; i < 5; i++) await tick();
    expect(sizes(primary)).toEqual([[1], [2, 3, 4], [5, 6, 7]]);
    const wide = new HeldPrimary();
    const sendWide = new WriteCoalescer(options({ maxChars: 10 })).sendVia(wide, soon);
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
    const send = coalescer.sendVia(primary, soon);
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

  it("polls on the caller's own timer: a batch sent at once arms none, a waiting one one per poll", async () => {
    const primary = new HeldPrimary();
    const timers = new HeldTimers();
    const send = new WriteCoalescer(options()).sendVia(primary, timers.after);
    const first = send("p0", 1, batch(1));
    await tick();
    expect(timers.armed).toHaveLength(0);
    const waiting = [2, 3].map((seq) => send("p0", 1, batch(seq)));
    await tick();
    expect(timers.armed.map((t) => t.ms)).toEqual([1, 1]);
    // A poll while the call is still in flight looks and polls again.
    timers.armed[0]?.fire();
    await tick();
    expect(timers.armed).toHaveLength(3);
    primary.calls[0]?.release();
    await first;
    for (const t of timers.armed.slice(1)) t.fire();
    await tick();
    expect(sizes(primary)).toEqual([[1], [2, 3]]);
    primary.calls[1]?.release();
    for (const t of timers.armed.slice(3)) t.fire();
    await Promise.all(waiting);
  });

  it("sends past a call lost with its request (never answered) once it is older than staleMs", async () => {
    const primary = new HeldPrimary();
    const timers = new HeldTimers();
    const coalescer = new WriteCoalescer(options({ staleMs: 3, giveUpMs: 10 }));
    // The first caller's request is gone: its call is never answered and it never polls again.
    void coalescer.sendVia(primary, () => {})("p0", 1, batch(1));
    const second = coalescer.sendVia(primary, timers.after)("p0", 1, batch(2));
    await tick();
    expect(sizes(primary)).toEqual([[1]]);
    for (let poll = 0; poll < 3; poll++) {
      timers.armed[poll]?.fire();
      await tick();
    }
    // Three polls (3 ms) blocked behind the lost call: not yet past staleMs.
    expect(sizes(primary)).toEqual([[1]]);
    timers.armed[3]?.fire();
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

  it("takes a batch out of line once it stands first without polling for staleMs (its request was dropped), so the lane goes on", async () => {
    const primary = new HeldPrimary();
    const timers = new HeldTimers();
    const coalescer = new WriteCoalescer(options({ staleMs: 3, giveUpMs: 100 }));
    const first = coalescer.sendVia(primary, soon)("p0", 1, batch(1));
    await tick();
    // The second caller's request is gone: its timers do not fire, and it is first in line once the call in flight ends.
    const frozen = new HeldTimers();
    const dropped = coalescer.sendVia(primary, frozen.after)("p0", 1, batch(2)).catch((err: Error) => err.message);
    const third = coalescer.sendVia(primary, timers.after)("p0", 1, batch(3));
    primary.calls[0]?.release();
    await first;
    for (let poll = 0; poll < 4; poll++) {
      fireAll(timers);
      await tick();
    }
    // Four polls (4 ms) behind a first that never polled: it is out, and the third caller sends.
    expect(sizes(primary)).toEqual([[1], [3]]);
    // Should it ever run again, it fails rather than sending.
    fireAll(frozen);
    await expect(dropped).resolves.toMatch(/stood first in line without polling for 3 ms/);
    expect(sizes(primary)).toEqual([[1], [3]]);
    primary.calls[1]?.release();
    fireAll(timers);
    expect(await third).toEqual({ status: "ok", results: [{ status: "applied", lsn: 3, replicated: true, late: 0 }] });
    // A first that does poll is waited for, here while it lingers for ten polls (longer than staleMs).
    const held = new HeldPrimary();
    const lively = new WriteCoalescer(options({ staleMs: 3, giveUpMs: 100, lingerPolls: 10 }));
    const other = lively.enter();
    const lingering = new HeldTimers();
    const b = lively.sendVia(held, lingering.after)("p0", 1, batch(2));
    const c = lively.sendVia(held, lingering.after)("p0", 1, batch(3));
    for (let poll = 0; poll < 9; poll++) {
      fireAll(lingering);
      await tick();
    }
    expect(sizes(held)).toEqual([]);
    fireAll(lingering);
    await tick();
    expect(sizes(held)).toEqual([[2, 3]]);
    held.calls[0]?.release();
    fireAll(lingering);
    await Promise.all([b, c]);
    other.leave();
  });

  it("fails a caller that polled for longer than its give-up time, and the others still go", async () => {
    const primary = new HeldPrimary();
    const timers = new HeldTimers();
    const send = new WriteCoalescer(options({ giveUpMs: 2 })).sendVia(primary, timers.after);
    const first = send("p0", 1, batch(1));
    const second = send("p0", 1, batch(2)).catch((err: Error) => err.message);
    await tick();
    timers.armed[0]?.fire();
    await tick();
    timers.armed[1]?.fire(); // the second caller's second poll: 2 ms of polls
    await expect(second).resolves.toBe("write to p0 not sent within 2 ms (coalescer)");
    const third = send("p0", 1, batch(3));
    primary.calls[0]?.release();
    await first;
    timers.armed[2]?.fire();
    await tick();
    expect(sizes(primary)).toEqual([[1], [3]]);
    primary.calls[1]?.release();
    await third;
  });

  it("takes a caller that gave up out of its lane's size, so a later small batch still waits behind the call in flight", async () => {
    const primary = new HeldPrimary();
    const timers = new HeldTimers();
    const send = new WriteCoalescer(options({ giveUpMs: 2, maxChars: 10 })).sendVia(primary, timers.after);
    const first = send("p0", 1, batch(1));
    const wide = send("p0", 1, batch(2, "123456")).catch((err: Error) => err.message);
    await tick();
    fireAll(timers);
    await tick();
    fireAll(timers);
    await expect(wide).resolves.toBe("write to p0 not sent within 2 ms (coalescer)");
    // 4 characters alone do not fill a 10-character group: it waits (before the fix the 6 given up still counted).
    const small = send("p0", 1, batch(3, "1234"));
    await tick();
    expect(sizes(primary)).toEqual([[1]]);
    primary.calls[0]?.release();
    await first;
    fireAll(timers);
    await tick();
    expect(sizes(primary)).toEqual([[1], [3]]);
    primary.calls[1]?.release();
    await small;
  });

  it("lets a batch for an idle primary wait while other requests are in progress, never for its own", async () => {
    const primary = new HeldPrimary();
    const timers = new HeldTimers();
    const coalescer = new WriteCoalescer(options({ lingerPolls: 2 }));
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
    fireAll(timers); // every caller's first poll: b is still in progress
    await tick();
    expect(sizes(primary)).toEqual([[1]]);
    b.leave();
    fireAll(timers);
    await tick();
    expect(sizes(primary)).toEqual([[1], [2, 3]]);
    primary.calls[1]?.release();
    await tick();
    fireAll(timers); // the second caller finds its outcome at its next poll
    await Promise.all([first, second]);
  });

  it("stops lingering after lingerPolls polls even while another request is in progress", async () => {
    const primary = new HeldPrimary();
    const timers = new HeldTimers();
    const coalescer = new WriteCoalescer(options({ lingerPolls: 2 }));
    const other = coalescer.enter();
    const reply = coalescer.sendVia(primary, timers.after)("p0", 1, batch(1));
    await tick();
    fireAll(timers);
    await tick();
    expect(sizes(primary)).toEqual([]);
    fireAll(timers);
    await tick();
    expect(sizes(primary)).toEqual([[1]]);
    primary.calls[0]?.release();
    await reply;
    other.leave();
  });

  it("stops counting a request in progress for longer than staleMs (its handler never finished), so sends no longer linger for it", async () => {
    const primary = new HeldPrimary();
    const timers = new HeldTimers();
    let now = 0;
    const coalescer = new WriteCoalescer(options({ lingerPolls: 2, staleMs: 100, now: () => now }));
    coalescer.enter(); // never leaves
    const waits = coalescer.sendVia(primary, timers.after)("p0", 1, batch(1));
    await tick();
    fireAll(timers);
    await tick();
    expect(sizes(primary)).toEqual([]); // it lingers for the other request
    fireAll(timers);
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

  it("sends batches that waited behind a call at their first poll after it ends when no other primary has a call in flight", async () => {
    const primary = new HeldPrimary();
    const timers = new HeldTimers();
    const coalescer = new WriteCoalescer(options({ lingerPolls: 2 }));
    const other = coalescer.enter();
    const first = coalescer.sendVia(primary, timers.after)("p0", 1, batch(1));
    fireAll(timers);
    await tick();
    fireAll(timers); // it lingered its two polls
    await tick();
    expect(sizes(primary)).toEqual([[1]]);
    const behind = [2, 3].map((seq) => coalescer.sendVia(primary, timers.after)("p0", 1, batch(seq)));
    await tick();
    primary.calls[0]?.release();
    await first;
    fireAll(timers);
    await tick();
    expect(sizes(primary)).toEqual([[1], [2, 3]]);
    primary.calls[1]?.release();
    await tick();
    fireAll(timers);
    await Promise.all(behind);
    other.leave();
  });

  it("lets batches that waited behind a call linger once it ends while a call to another primary is in flight", async () => {
    const primary = new HeldPrimary();
    const timers = new HeldTimers();
    const coalescer = new WriteCoalescer(options({ lingerPolls: 2 }));
    const other = coalescer.enter();
    const elsewhere = coalescer.sendVia(primary, timers.after)("p1", 1, batch(9));
    const first = coalescer.sendVia(primary, timers.after)("p0", 1, batch(1));
    for (let i = 0; i < 2; i++) {
      fireAll(timers); // both linger their two polls, then go
      await tick();
    }
    expect(sizes(primary)).toEqual([[9], [1]]);
    const behind = [2, 3].map((seq) => coalescer.sendVia(primary, timers.after)("p0", 1, batch(seq)));
    await tick();
    primary.calls[1]?.release();
    await first;
    fireAll(timers); // the call to p0 ended, but p1's is still in flight: they linger
    await tick();
    expect(sizes(primary)).toEqual([[9], [1]]);
    fireAll(timers);
    await tick();
    fireAll(timers);
    await tick();
    expect(sizes(primary)).toEqual([[9], [1], [2, 3]]);
    for (const c of [primary.calls[0], primary.calls[2]]) c?.release();
    await tick();
    fireAll(timers);
    await Promise.all([elsewhere, ...behind]);
    other.leave();
  });
});
