/**
 * IndexedDbStore in headless Chromium: a page loads the bundled browser SDK and produces
 * 40 events; the page is reloaded while the server holds back its answer to a batch it has
 * already applied; the reloaded page resumes from IndexedDB (resending that batch with the
 * same seq, then its input after the batch's tag) and the server holds every event exactly
 * once. The server is a small Node HTTP front for test/helpers/fake-ingest-server.ts, which
 * applies each (producer, seq) once, as the replicas do.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeIngestServer } from "../helpers/fake-ingest-server.ts";

const EVENTS = 40;

/**
 * Queues every input after the last one the store has (the pending batch's tag, else the
 * acknowledged one), in batches of 5 (the linger never cuts one), and flushes.
 */
const PAGE = `<!doctype html><title>producer</title><script type="module">
import { createFluxClient, IndexedDbStore } from "/sdk.js";
const client = createFluxClient({ url: location.origin, token: "page-token" });
const producer = await client.producer({ stream: "clicks", store: new IndexedDbStore("flux:clicks"), maxBatchEvents: 5, lingerMs: 60000 });
const saved = producer.state;
const resumeAt = (saved.pending?.tag ?? saved.ackedTag ?? -1) + 1;
window.flux = { producerId: producer.producerId, resumeAt, done: false, error: null };
const sends = [];
for (let i = resumeAt; i < ${EVENTS}; i++) sends.push(producer.send({ i }, i));
Promise.all(sends).then(() => producer.flush()).then(
  () => Object.assign(window.flux, { done: true, totals: producer.totals }),
  (err) => (window.flux.error = String(err)),
);
</script>`;

/** What the page script leaves in `window.flux`. */
interface PageState {
  producerId: string;
  resumeAt: number;
  done: boolean;
  error: string | null;
  totals?: { batches: number; events: number; duplicateBatches: number };
}

let browser: Browser;
let server: Server;
let origin: string;
let sdk: string;
const ingest = new FakeIngestServer(() => Date.now());

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (text += chunk));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}

async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method === "GET" && req.url === "/") return void res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
  if (req.method === "GET" && req.url === "/sdk.js") return void res.writeHead(200, { "content-type": "text/javascript" }).end(sdk);
  if (req.method !== "POST" || !req.url?.startsWith("/v1/streams/")) return void res.writeHead(404).end();
  const headers = Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, String(value)]));
  const answer = await ingest.fetch(origin + req.url, { method: "POST", headers, body: await readBody(req) });
  res.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text());
}

/** Polls `check` every 20 ms until it holds; throws `what` after `timeoutMs`. */
async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  const entry = fileURLToPath(new URL("../../client/browser.ts", import.meta.url));
  const bundle = await build({ entryPoints: [entry], bundle: true, format: "esm", platform: "browser", write: false, logLevel: "silent" });
  sdk = bundle.outputFiles[0]?.text ?? "";
  server = createServer((req, res) => void serve(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  origin = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

describe("IndexedDbStore in Chromium", () => {
  it("a page reloaded while a batch is unanswered resends it from IndexedDB: every event lands exactly once", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    ingest.next({ kind: "answer" }, { kind: "answer" }, { kind: "hold-answer", release: held });
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (err) => pageErrors.push(err.message));
    const pageState = () => page.evaluate(() => (globalThis as unknown as { flux: PageState }).flux);

    await page.goto(`${origin}/`);
    // The third batch (events 10..14, tag 14) is applied and its answer held: reload before it arrives.
    await until(() => ingest.requests.length === 3, "the third batch reached the server");
    const before = await pageState();
    expect(before).toMatchObject({ resumeAt: 0, done: false });
    await page.reload();
    await page.waitForFunction(() => {
      const flux = (globalThis as unknown as { flux?: PageState }).flux;
      return flux !== undefined && (flux.done || flux.error !== null);
    }, undefined, { timeout: 20_000 });
    release();

    const after = await pageState();
    expect(after).toMatchObject({ producerId: before.producerId, resumeAt: 15, done: true, error: null });
    expect(after.totals).toMatchObject({ batches: 8, events: EVENTS, duplicateBatches: 1 });
    expect(ingest.applied).toEqual(Array.from({ length: EVENTS }, (_, i) => ({ i })));
    expect(ingest.requests.map((r) => [r.producer, r.seq])).toEqual([1, 2, 3, 3, 4, 5, 6, 7, 8].map((seq) => [before.producerId, seq]));
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 60_000);
});
