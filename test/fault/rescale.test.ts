/**
 * Growing a dataflow while a primary fails mid-move (issue 28, in workerd): the source
 * primary of the moves, or the new partition's primary (their target), crashes after the
 * first moves ran and while posts go on. The monitor takes over, every move finishes or is
 * given up with its groups back where they were, the partitions end healthy with an even
 * share of the groups, and the results equal one application of every acknowledged batch.
 * A subscriber resuming with a cursor from before the growth gets every window once.
 */
import { describe, expect, it } from "vitest";
import { call, clicksSpec, createDataflow, postEvents, subscribe } from "../helpers/api.ts";
import { expectExact, fault, faultSpec, routing, tick, type Event } from "../helpers/fault-client.ts";

const PAGES = Array.from({ length: 16 }, (_, i) => `/p${i}`);

function batchEvents(seq: number): Event[] {
  return PAGES.map((page, i) => ({ page, ts: seq * 1_000 + i, bytes: seq + i }));
}

interface StatusDataflow {
  id: string;
  partitions: { keyGroups: number; status: string }[];
  moves: unknown[];
  events: { kind: string; partition: number; detail: string }[];
}

async function statusOf(id: string): Promise<StatusDataflow> {
  const body = (await (await call("GET", "/v1/status")).json()) as { dataflows: StatusDataflow[] };
  const found = body.dataflows.find((d) => d.id === id);
  if (!found) throw new Error(`no ${id} in the status`);
  return found;
}

/** Posts until acknowledged, ticking the monitors between tries: a fail-over answers UNAVAILABLE, a moving group BACKPRESSURE. */
async function postUntilAcked(stream: string, seq: number): Promise<string[]> {
  const codes: string[] = [];
  for (let attempt = 0; attempt < 40; attempt++) {
    const res = await postEvents(stream, "client", seq, batchEvents(seq));
    if (res.status === 200) return codes;
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    expect([res.status, ["UNAVAILABLE", "BACKPRESSURE"].includes(error.code)], error.message).toEqual([503, true]);
    codes.push(error.code);
    await tick();
  }
  throw new Error(`batch ${seq} not acknowledged: ${codes.join(",")}`);
}

describe.each(["source", "target"] as const)("a crash of the %s primary while the dataflow grows", (which) => {
  it("is masked: every move ends, the groups are even, results exact", async () => {
    const { id, stream } = await createDataflow(faultSpec);
    const acked: Event[][] = [];
    for (let seq = 1; seq <= 3; seq++) {
      await postUntilAcked(stream, seq);
      acked.push(batchEvents(seq));
    }
    const grow = await call("PUT", `/v1/dataflows/${id}`, clicksSpec(stream, { ...faultSpec, partitions: 3 }));
    expect(grow.status).toBe(202);
    // The first moves run; then the victim crashes while more are queued.
    await tick(id);
    expect((await statusOf(id)).moves.length).toBeGreaterThan(0);
    const victim = (await routing(id))[which === "source" ? 0 : 2]?.primary ?? "";
    expect((await fault(victim, "crash")).status).toBe(200);
    const codes: string[] = [];
    for (let seq = 4; seq <= 12; seq++) {
      codes.push(...(await postUntilAcked(stream, seq)));
      acked.push(batchEvents(seq));
    }
    for (let i = 0; i < 60 && ((await statusOf(id)).moves.length > 0 || (await routing(id)).some((r) => r.status !== "healthy")); i++) await tick(id);
    const status = await statusOf(id);
    expect(status.moves).toEqual([]);
    expect(status.partitions.map((p) => p.status)).toEqual(["healthy", "healthy", "healthy"]);
    const kinds = status.events.map((e) => e.kind);
    expect(kinds).toContain("takeover");
    expect(kinds).toContain("move-finished");
    // Every group is where the moves that finished put it; a given-up move left its groups on the source.
    expect(status.partitions.reduce((n, p) => n + p.keyGroups, 0)).toBe(256);
    if (!kinds.includes("move-given-up")) expect(status.partitions.map((p) => p.keyGroups)).toEqual([86, 85, 85]);
    expect((await routing(id)).map((r) => r.primary)).not.toContain(victim);
    expect(codes.length, "the client saw the fault").toBeGreaterThan(0);
    await expectExact(id, stream, acked);
  });
});

describe("a subscriber while the dataflow grows", () => {
  it("resumes with its old cursor and gets every closed window exactly once, wherever its key's group went", async () => {
    const pages = Array.from({ length: 24 }, (_, i) => `/s${i}`);
    const { id, stream } = await createDataflow({ partitions: 2, window: { kind: "tumbling", sizeMs: 1_000 } });
    const post = async (second: number) => {
      for (let attempt = 0; attempt < 40; attempt++) {
        const res = await postEvents(stream, "p", second + 1, pages.map((page) => ({ page, ts: second * 1_000 + 5, bytes: 1 })));
        if (res.status === 200) return;
        expect(res.status).toBe(503);
        await tick(id);
      }
      throw new Error(`second ${second} not acknowledged`);
    };
    for (let second = 0; second < 3; second++) await post(second);
    const before = await subscribe(id, 200);
    expect(before.length).toBe(pages.length * 2);
    expect((await call("PUT", `/v1/dataflows/${id}`, clicksSpec(stream, { partitions: 3, window: { kind: "tumbling", sizeMs: 1_000 } }))).status).toBe(202);
    for (let second = 3; second < 7; second++) {
      await post(second);
      await tick(id);
    }
    for (let i = 0; i < 60 && (await statusOf(id)).moves.length > 0; i++) await tick(id);
    expect((await statusOf(id)).moves).toEqual([]);
    // The cursor names two partitions; the third is read from its first window.
    const cursor = before.at(-1)?.id ?? "";
    expect(cursor.split(",")).toHaveLength(2);
    // Long enough for a feed that starts from cached routing to be refused, refresh it and go on.
    const after = await subscribe(id, 1_500, cursor);
    const windowOf = (e: (typeof before)[number]) => `${e.data.key}@${e.data.windowStartMs}`;
    const seen = [...before, ...after];
    expect(new Set(seen.map(windowOf)).size, "no window twice").toBe(seen.length);
    const everything = await subscribe(id, 1_500);
    expect(seen.map(windowOf).sort()).toEqual(everything.map(windowOf).sort());
    // Seconds 0..5 are closed for every page (second 6 reached every partition), each counted once.
    const expected = pages.flatMap((page) => [0, 1, 2, 3, 4, 5].map((s) => `${page}@${s * 1_000}`)).sort();
    expect(everything.map(windowOf).sort()).toEqual(expected);
    expect(everything.every((e) => e.data.values.n === 1)).toBe(true);
  });
});
