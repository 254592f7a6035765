/** The upstream primary's deliverer (issue 27) over fake ports: probes, routed deliveries, one in flight per edge, failures, backpressure, resets. */
import { describe, expect, it } from "vitest";
import { DataflowSpecSchema } from "../../../shared/dataflow-checks/dataflow-spec-schema.ts";
import { partitionFor } from "../../../shared/partitioner.ts";
import { Deliverer, type DeliveryPort, type ExchangeLimits, type ReaderRoute, type UpstreamView } from "../../../shared/stages/deliverer.ts";
import type { Delivery } from "../../../shared/wire/exchange.ts";
import type { Deliver, DeliverReply, NumberedOutput } from "../../../shared/wire/replica-rpc.ts";
import { defaultKeyGroupMap } from "../../../shared/keygroups/key-groups.ts";

const LIMITS: ExchangeLimits = { maxRecords: 100, idleIntervalMs: 50, retryMs: 1_000, boundOutputs: 10, maxKeyLength: 256 };
const SOURCE = { dataflow: "up", partition: 0, partitions: 1 };
const PROBE: Delivery = { source: SOURCE, fromSeq: 0, toSeq: 0, records: [], outputSeqs: [], watermarkMs: null };

/** A stage `id` reading `up` over `partitions` partitions, whose primaries `id-j` are at epoch 4. */
function reader(id: string, partitions: number): ReaderRoute {
  const spec = DataflowSpecSchema.parse({ from: "up", key: "key", window: { kind: "tumbling", sizeMs: 100 }, aggregates: { n: { op: "sum", field: "values.n" } }, partitions });
  return { id, spec, keyGroups: defaultKeyGroupMap(partitions), routes: Array.from({ length: partitions }, (_, j) => ({ primary: `${id}-${j}`, epoch: 4 })) };
}

/** One call of `deliver`, answered (or failed) when the test says. */
interface Call {
  replica: string;
  msg: Deliver;
  answered: boolean;
  answer(reply: DeliverReply): void;
  fail(): void;
}

/** U_0 of `up` delivering to the stages in `routes`, with every port recorded and no real time. */
class Harness {
  now = 1_000;
  view: UpstreamView | null = { source: SOURCE, key: "page", epoch: 1, readers: ["down"], outputSeq: 0, watermarkMs: null };
  routes: ReaderRoute[];
  readonly stored: NumberedOutput[] = [];
  readonly calls: Call[] = [];
  readonly lookups: string[][] = [];
  readonly failures: string[] = [];
  readonly wakes: number[] = [];
  readonly warnings: string[] = [];
  failLookups = false;
  readonly deliverer: Deliverer;

  constructor(routes: ReaderRoute[], limits: ExchangeLimits = LIMITS) {
    this.routes = routes;
    const port: DeliveryPort = {
      readers: (ids) => {
        this.lookups.push([...ids]);
        return this.failLookups ? Promise.reject(new Error("coordinator unavailable")) : Promise.resolve(this.routes.filter((r) => ids.includes(r.id)));
      },
      deliver: (replica, msg) =>
        new Promise<DeliverReply>((resolve, reject) => {
          const call: Call = {
            replica,
            msg,
            answered: false,
            answer: (reply) => {
              call.answered = true;
              resolve(reply);
            },
            fail: () => {
              call.answered = true;
              reject(new Error("timed out"));
            },
          };
          this.calls.push(call);
        }),
      reportFailure: (replica) => void this.failures.push(replica),
      wakeAt: (atMs) => void this.wakes.push(atMs),
      warn: (message) => void this.warnings.push(message),
    };
    const link = {
      view: () => this.view,
      readOutputs: (afterSeq: number, limit: number) => this.stored.filter((o) => o.outputSeq > afterSeq).slice(0, limit),
      now: () => this.now,
    };
    this.deliverer = new Deliverer(port, link, limits);
  }

  /** Stores U's next outputs: a closed result of window [0, 100) per `key: n`. */
  emit(...outputs: [key: string, n: number][]): void {
    for (const [key, n] of outputs) {
      const outputSeq = this.stored.length + 1;
      this.stored.push({ outputSeq, result: { key, windowStartMs: 0, windowEndMs: 100, values: { n }, closed: true } });
    }
    if (this.view) this.view = { ...this.view, outputSeq: this.stored.length };
  }

  /** Changes what the replica's view says (it stays a primary with state). */
  set(change: Partial<UpstreamView>): void {
    if (!this.view) throw new Error("no view");
    this.view = { ...this.view, ...change };
  }

  /** Kicks the deliverer and lets every settled promise run. */
  async kick(): Promise<void> {
    this.deliverer.kick();
    await settle();
  }

  /** The unanswered call to `replica` (there is at most one). */
  open(replica: string): Call {
    const open = this.calls.filter((c) => c.replica === replica && !c.answered);
    if (open.length !== 1) throw new Error(`${open.length} open calls to ${replica}`);
    return open[0] as Call;
  }

  /** Answers the open call to `replica` and lets the deliverer react. */
  async reply(replica: string, reply: DeliverReply): Promise<void> {
    this.open(replica).answer(reply);
    await settle();
  }

  /** The deliveries sent so far to `replica`, in order. */
  sent(replica: string): Delivery[] {
    return this.calls.filter((c) => c.replica === replica).map((c) => c.msg.delivery);
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** Keys `a` and `c` route to partition 0 of 2, `b` and `d` to partition 1. */
const ROUTED = { a: 0, b: 1, c: 0, d: 1 } as const;

/** A one-partition stage that acknowledged outputs 1..3 (delivered after its probe). */
async function established(): Promise<Harness> {
  const h = new Harness([reader("down", 1)]);
  h.emit(["a", 1], ["b", 2], ["c", 3]);
  await h.kick();
  await h.reply("down-0", { status: "duplicate", hw: 0 });
  await h.reply("down-0", { status: "accepted", hw: 3 });
  return h;
}

describe("Deliverer: probes and deliveries", () => {
  it("routes the test keys as the fixtures say", () => {
    for (const [key, partition] of Object.entries(ROUTED)) expect(partitionFor(key, 2), key).toBe(partition);
  });

  it("learns its readers, then probes every edge of each before sending any records", async () => {
    const h = new Harness([reader("down", 2)]);
    h.emit(["a", 1], ["b", 2]);
    await h.kick();
    expect(h.lookups).toEqual([["down"]]);
    expect(h.calls.map((c) => [c.replica, c.msg])).toEqual([
      ["down-0", { epoch: 4, delivery: PROBE }],
      ["down-1", { epoch: 4, delivery: PROBE }],
    ]);
  });

  it("after a probe finds nothing held, sends each partition the records routed to it, with the watermark", async () => {
    const h = new Harness([reader("down", 2)]);
    h.emit(["a", 1], ["b", 2], ["c", 3]);
    h.set({ watermarkMs: 250 });
    await h.kick();
    await h.reply("down-0", { status: "duplicate", hw: 0 });
    await h.reply("down-1", { status: "duplicate", hw: 0 });
    expect(h.open("down-0").msg.delivery).toEqual({ source: SOURCE, fromSeq: 0, toSeq: 3, records: [["a", 99, 1], ["c", 99, 3]], outputSeqs: [1, 3], watermarkMs: 250 });
    expect(h.open("down-1").msg.delivery).toEqual({ source: SOURCE, fromSeq: 0, toSeq: 3, records: [["b", 99, 2]], outputSeqs: [2], watermarkMs: 250 });
  });

  it("keeps one delivery in flight per edge; outputs emitted meanwhile go in the next", async () => {
    const h = new Harness([reader("down", 2)]);
    h.emit(["a", 1]);
    await h.kick();
    await h.reply("down-0", { status: "duplicate", hw: 0 });
    h.emit(["c", 2], ["a", 3]);
    await h.kick();
    expect(h.sent("down-0").map((d) => [d.fromSeq, d.toSeq])).toEqual([[0, 0], [0, 1]]);
    await h.reply("down-0", { status: "accepted", hw: 1 });
    expect(h.sent("down-0").map((d) => [d.fromSeq, d.toSeq, d.outputSeqs])).toEqual([[0, 0, []], [0, 1, [1]], [1, 3, [2, 3]]]);
  });

  it("resumes from the hw a probe reports, sending nothing the stage holds", async () => {
    const h = new Harness([reader("down", 1)]);
    h.emit(["a", 1], ["b", 2], ["c", 3]);
    await h.kick();
    await h.reply("down-0", { status: "duplicate", hw: 2 });
    expect(h.open("down-0").msg.delivery).toMatchObject({ fromSeq: 2, toSeq: 3, records: [["c", 99, 3]], outputSeqs: [3] });
  });

  it("claims the watermark only in a delivery that reaches the upstream's last output", async () => {
    const h = new Harness([reader("down", 1)]);
    h.emit(...Array.from({ length: 12 }, (_, k): [string, number] => [`k${k}`, k]));
    h.set({ watermarkMs: 500 });
    await h.kick();
    await h.reply("down-0", { status: "duplicate", hw: 0 });
    expect(h.open("down-0").msg.delivery).toMatchObject({ fromSeq: 0, toSeq: 10, watermarkMs: null });
    await h.reply("down-0", { status: "accepted", hw: 10 });
    expect(h.open("down-0").msg.delivery).toMatchObject({ fromSeq: 10, toSeq: 12, outputSeqs: [11, 12], watermarkMs: 500 });
  });

  it("sends a higher watermark alone once idleIntervalMs passed, arming a wake for it", async () => {
    const h = await established();
    h.set({ watermarkMs: 400 });
    await h.kick();
    expect(h.calls.filter((c) => !c.answered)).toEqual([]);
    expect(h.wakes).toEqual([1_050]);
    h.now = 1_050;
    await h.kick();
    expect(h.open("down-0").msg.delivery).toEqual({ source: SOURCE, fromSeq: 3, toSeq: 3, records: [], outputSeqs: [], watermarkMs: 400 });
  });

  it("warns once about an output the stage cannot read, and covers it without a record", async () => {
    const h = await established();
    h.stored.push({ outputSeq: 4, result: { key: "e", windowStartMs: 0, windowEndMs: 100, values: {}, closed: true } });
    h.emit(["a", 5]);
    await h.kick();
    await h.kick();
    expect(h.warnings).toHaveLength(1);
    expect(h.warnings[0]).toMatch(/^result 4 goes to no partition of stage 'down': values\.n/);
    expect(h.open("down-0").msg.delivery).toMatchObject({ fromSeq: 3, toSeq: 5, outputSeqs: [5] });
  });
});

describe("Deliverer: failures and refusals", () => {
  it("on a failed call reports the replica, relearns the readers on the next kick and resends from the same cursor", async () => {
    const h = await established();
    h.emit(["d", 4]);
    await h.kick();
    h.open("down-0").fail();
    await settle();
    expect(h.failures).toEqual(["down-0"]);
    expect(h.wakes).toEqual([2_000]);
    h.now = 2_000;
    await h.kick();
    expect(h.lookups).toHaveLength(2);
    expect(h.sent("down-0").map((d) => [d.fromSeq, d.toSeq])).toEqual([[0, 0], [0, 3], [3, 4], [3, 4]]);
  });

  it("on a stale refusal relearns the readers without reporting the replica", async () => {
    const h = await established();
    h.emit(["d", 4]);
    await h.kick();
    await h.reply("down-0", { status: "stale", epoch: 5 });
    expect(h.failures).toEqual([]);
    expect(h.wakes).toEqual([2_000]);
    await h.kick();
    expect(h.lookups).toHaveLength(2);
    expect(h.open("down-0").msg.delivery).toMatchObject({ fromSeq: 3, toSeq: 4 });
  });

  it("warns when a stage says it does not read this source, and relearns the readers", async () => {
    const h = await established();
    h.emit(["d", 4]);
    await h.kick();
    await h.reply("down-0", { status: "unknown-source", message: "dataflow 'down' does not read 'up' partition 0" });
    expect(h.warnings).toEqual(["stage 'down' refused a delivery: dataflow 'down' does not read 'up' partition 0"]);
    await h.kick();
    expect(h.lookups).toHaveLength(2);
  });

  it("retries learning its readers on the alarm when the lookup fails", async () => {
    const h = new Harness([reader("down", 1)]);
    h.failLookups = true;
    await h.kick();
    expect([h.calls, h.wakes]).toEqual([[], [2_000]]);
    h.failLookups = false;
    await h.kick();
    expect(h.calls.map((c) => c.msg.delivery)).toEqual([PROBE]);
  });
});

describe("Deliverer: backpressure, status and resets", () => {
  it("names the first edge lagging boundOutputs or more as the reason to refuse ingest", async () => {
    const h = new Harness([reader("down", 2)]);
    h.emit(...Array.from({ length: 9 }, (_, k): [string, number] => [k % 2 === 0 ? "a" : "b", k]));
    expect(h.deliverer.ingestRefusal()).toBeNull();
    await h.kick();
    await h.reply("down-0", { status: "duplicate", hw: 0 });
    await h.reply("down-1", { status: "duplicate", hw: 0 });
    expect(h.deliverer.ingestRefusal()).toBeNull();
    await h.reply("down-0", { status: "accepted", hw: 9 });
    h.emit(["a", 9]);
    expect(h.deliverer.ingestRefusal()).toBe("edge up/p0 → down/p1 is 10 outputs behind (bound 10): downstream partition unavailable");
    expect(h.deliverer.maxLag()).toBe(10);
  });

  it("reports per edge what it delivered and what was acknowledged", async () => {
    const h = new Harness([reader("down", 2)]);
    expect(h.deliverer.edges()).toEqual([]);
    h.emit(["a", 1], ["b", 2], ["c", 3]);
    await h.kick();
    expect(h.deliverer.edges()).toEqual([
      { dataflow: "down", partition: 0, delivered: 0, acknowledged: null },
      { dataflow: "down", partition: 1, delivered: 0, acknowledged: null },
    ]);
    await h.reply("down-0", { status: "duplicate", hw: 0 });
    await h.reply("down-1", { status: "duplicate", hw: 0 });
    await h.reply("down-0", { status: "accepted", hw: 3 });
    expect(h.deliverer.edges()).toEqual([
      { dataflow: "down", partition: 0, delivered: 3, acknowledged: 3 },
      { dataflow: "down", partition: 1, delivered: 3, acknowledged: 0 },
    ]);
  });

  it("forgets its cursors and probes again in a new epoch, ignoring answers to what it sent before", async () => {
    const h = await established();
    h.emit(["d", 4]);
    await h.kick();
    const before = h.open("down-0");
    h.set({ epoch: 2 });
    await h.kick();
    expect(h.lookups).toHaveLength(2);
    expect(h.calls.at(-1)?.msg.delivery).toEqual(PROBE);
    before.answer({ status: "accepted", hw: 4 });
    await settle();
    expect(h.deliverer.edges()).toEqual([{ dataflow: "down", partition: 0, delivered: 0, acknowledged: null }]);
  });

  it("forgets its cursors and probes every reader again when the set of readers changes", async () => {
    const h = await established();
    h.routes = [...h.routes, reader("other", 1)];
    h.set({ readers: ["down", "other"] });
    await h.kick();
    expect(h.lookups.at(-1)).toEqual(["down", "other"]);
    expect(h.calls.filter((c) => !c.answered).map((c) => [c.replica, c.msg.delivery])).toEqual([
      ["down-0", PROBE],
      ["other-0", PROBE],
    ]);
  });

  it("does nothing while its replica is not a primary with readers", async () => {
    const h = new Harness([reader("down", 1)]);
    h.view = null;
    await h.kick();
    expect([h.lookups, h.calls, h.deliverer.ingestRefusal(), h.deliverer.maxLag()]).toEqual([[], [], null, 0]);
  });
});
