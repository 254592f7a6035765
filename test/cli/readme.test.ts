/**
 * The README's five-minute tour as a newcomer pastes it (issue 26), against a local stack
 * (`wrangler dev`, test/helpers/local-stack.ts): each command of its shell block runs as
 * written, with only `$FLUX` and `$AUTH` pointing at the stack instead of `npm start`'s port
 * and token; then its second stage (issue 27), and its crash step against `clicks-per-page`
 * under a retrying load, with the takeover seen in the routing and the load's totals exact afterwards.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalStack, STACK_ADMIN_TOKEN, STACK_TOKEN, type LocalStack } from "../helpers/local-stack.ts";

const run = promisify(execFile);
const README = readFileSync("README.md", "utf8");

/** The README's `sh` code blocks, list indentation removed. */
const blocks = [...README.matchAll(/^( *)```sh\n([\s\S]*?)^ *```/gm)].map(([, indent = "", body = ""]) =>
  body
    .split("\n")
    .map((line) => line.slice(indent.length))
    .join("\n"),
);

/** A block's commands: comments and blank lines dropped, `\` continuations and multi-line quotes joined. */
function commandsOf(block: string): string[] {
  const commands: string[] = [];
  let current = "";
  for (const line of block.split("\n")) {
    if (current === "" && (line.trim() === "" || line.trimStart().startsWith("#"))) continue;
    current += (current === "" ? "" : "\n") + line;
    const quotesOpen = (current.match(/'/g)?.length ?? 0) % 2 === 1;
    if (!quotesOpen && !line.endsWith("\\")) {
      commands.push(current);
      current = "";
    }
  }
  return commands;
}

let stack: LocalStack;
let shellEnv: Record<string, string>;

/** Runs one README command in bash; a command that follows live (`curl -N`) is stopped after 6 s. */
async function sh(command: string): Promise<{ code: number; stdout: string }> {
  const script = `curl() { command curl -sS --max-time 6 "$@"; }\n${command}`;
  return run("bash", ["-c", script], { env: { ...process.env, ...shellEnv }, timeout: 30_000 }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (err: { code?: number; stdout?: string }) => ({ code: err.code ?? -1, stdout: err.stdout ?? "" }),
  );
}

beforeAll(async () => {
  stack = await startLocalStack();
  shellEnv = { FLUX: stack.url, AUTH: `authorization: Bearer ${STACK_TOKEN}` };
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

describe("the README's tour", () => {
  it("creates the dataflow, posts, reads, closes a window and subscribes, as each step says", async () => {
    const tour = blocks.find((b) => b.includes("export FLUX="));
    expect(tour, "the tour's shell block").toBeDefined();
    const [exported, ...commands] = commandsOf(tour ?? "");
    expect(exported).toMatch(/^export FLUX=http:\/\/127\.0\.0\.1:8787 AUTH="authorization: Bearer dev-token"$/);
    expect(commands).toHaveLength(5);
    const [put, post, read, close, subscribe] = commands as [string, string, string, string, string];

    expect(JSON.parse((await sh(put)).stdout)).toMatchObject({ status: "created", dataflow: { id: "tour-by-page" } });
    expect(JSON.parse((await sh(post)).stdout)).toMatchObject({ events: 2, duplicate: false });
    // "a resend is answered as a duplicate and counts nothing twice"
    expect(JSON.parse((await sh(post)).stdout)).toMatchObject({ events: 2, duplicate: true });
    const open = JSON.parse((await sh(read)).stdout) as { results: { key: string; closed: boolean; values: Record<string, number> }[] };
    expect(open.results).toEqual([expect.objectContaining({ key: "home", closed: false, values: { n: 2, bytes: 602 } })]);
    expect(JSON.parse((await sh(close)).stdout)).toMatchObject({ events: 1, duplicate: false });
    const live = await sh(subscribe);
    expect(live.code).toBe(28); // curl's "timed out": the subscription was still following live
    expect(live.stdout).toContain("event: window");
    const first = /^data: (.*)$/m.exec(live.stdout)?.[1] ?? "{}";
    expect(JSON.parse(first)).toMatchObject({ key: "home", windowStartMs: 1_700_000_000_000, values: { n: 2, bytes: 602 } });
  }, 90_000);

  it("creates the tour's second stage over tour-by-page: it starts from the first result, warns, and holds home's views in an open window", async () => {
    const block = blocks.find((b) => b.includes("tour-top-pages"));
    const [put, read] = commandsOf(block ?? "") as [string, string];
    const created = JSON.parse((await sh(put)).stdout) as { status: string; starts: unknown; warnings: string[] };
    expect(created).toMatchObject({ status: "created", starts: [{ dataflow: "tour-by-page", resultsSoFar: 1 }] });
    expect(created.warnings).toEqual([expect.stringContaining("dataflow 'tour-by-page' has no idleAdvanceMs")]);
    const deadline = Date.now() + 10_000;
    let results: unknown[] = [];
    while (results.length === 0 && Date.now() < deadline) {
      results = (JSON.parse((await sh(read)).stdout) as { results: unknown[] }).results;
      if (results.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(results).toEqual([
      { key: "1700000000000", windowStartMs: 1_700_000_000_000, windowEndMs: 1_700_000_010_000, values: { top: [{ value: "home", count: 2, error: 0 }] }, closed: false },
    ]);
  }, 60_000);

  it("crashes the demo dataflow's primary of partition 0: a takeover, and the retrying load's totals exact", async () => {
    const block = blocks.find((b) => b.includes("npm run chaos -- crash"));
    const crash = block?.split("#")[0]?.trim() ?? "";
    expect(crash).toBe("npm run chaos -- crash");
    const spec = { stream: "clicks", key: "page", timeField: "ts", window: { kind: "tumbling", sizeMs: 10_000 }, aggregates: { n: { op: "count" } } };
    expect((await stack.api("PUT", "/v1/dataflows/clicks-per-page", spec)).status).toBe(201);

    // Like npm start's demo load: 20 events per batch, each resent with its seq until it gets a 200.
    const pages = ["home", "cart", "search", "product", "checkout"];
    let acknowledged = 0;
    let stopping = false;
    const load = (async () => {
      for (let seq = 1; !stopping; seq++) {
        const events = Array.from({ length: 20 }, (_, i) => ({ page: pages[(seq + i) % pages.length], ts: Date.now() }));
        while ((await stack.api("POST", "/v1/streams/clicks/events", events, { "flux-producer-id": "tour-load", "flux-seq": String(seq) })).status !== 200) {
          await new Promise((r) => setTimeout(r, 50));
        }
        acknowledged += events.length;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await new Promise((r) => setTimeout(r, 1_000));
    const port = new URL(stack.url).port;
    const chaosEnv = { FLUX_TOKEN: STACK_TOKEN, FLUX_ADMIN_TOKEN: STACK_ADMIN_TOKEN };
    const crashed = await run("bash", ["-c", `${crash} --port ${port}`], { env: { ...process.env, ...chaosEnv } });
    expect(crashed.stdout).toMatch(/crash clicks-per-page\/p0\/g0 \(epoch 1, healthy\): 200/);

    const deadline = Date.now() + 20_000;
    let route: { epoch: number; primary: string } | undefined;
    while (Date.now() < deadline) {
      const shown = (await stack.api("GET", "/v1/dataflows/clicks-per-page")).body as { dataflow: { partitions: { partition: number; epoch: number; primary: string }[] } };
      route = shown.dataflow.partitions.find((p) => p.partition === 0);
      if (route && route.epoch > 1) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(route?.epoch).toBeGreaterThan(1);
    expect(route?.primary).toBe("clicks-per-page/p0/g1");
    await new Promise((r) => setTimeout(r, 1_000));
    stopping = true;
    await load;

    const read = (await stack.api("GET", "/v1/dataflows/clicks-per-page/results?limit=10000")).body as { results: { values: { n: number } }[] };
    expect(read.results.reduce((sum, r) => sum + r.values.n, 0)).toBe(acknowledged);
    const healed = await run("bash", ["-c", `npm run chaos -- heal --port ${port}`], { env: { ...process.env, ...chaosEnv } });
    expect(healed.stdout).toContain("heal clicks-per-page/p0/g0");
  }, 120_000);
});
