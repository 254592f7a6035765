/**
 * `flux post FILE.ndjson --stream S`: posts an NDJSON file through an idempotent producer
 * whose state (producer id, seq, the batch in flight, totals, the line reached) lives in
 * a state file. After Ctrl-C or a crash, the same command resumes: the batch in flight is
 * resent with its seq and reading goes on after it, so the totals come out exact.
 */
import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { createInterface } from "node:readline";
import { Command } from "commander";
import { z } from "zod";
import type { Producer } from "../../../shared/client/producer.ts";
import type { ProducerTotals } from "../../../shared/client/producer-store.ts";
import { action, contextOf, type CommandContext } from "../context.ts";
import { EXIT } from "../exit-codes.ts";
import { FileStore } from "../file-store.ts";
import { wholeNumber } from "../numbers.ts";
import { PostProgress } from "../post-progress.ts";
import { scanNdjson } from "../scan-ndjson.ts";

interface PostOptions {
  stream: string;
  producer?: string;
  state?: string;
  restart?: boolean;
  batchEvents: number;
  batchBytes: number;
  linger: number;
  progress: boolean;
}

/** The tag kept with each batch: the file line of its last event. */
const TagSchema = z.object({ line: z.number().int() });
const lineOf = (tag: unknown) => TagSchema.safeParse(tag).data?.line;

export function postCommand(): Command {
  return new Command("post")
    .description("post an NDJSON file to a stream, resumable after Ctrl-C or a crash")
    .argument("<file>", "NDJSON: one JSON event per line, blank lines ignored")
    .requiredOption("-s, --stream <stream>", "stream to post to")
    .option("--producer <id>", "producer id for a new run (default: a random one, kept in the state file)")
    .option("--state <file>", "state file (default: .flux/post-<stream>-<file>.json)")
    .option("--restart", "forget the saved state and post the whole file again under a new producer id")
    .option("--batch-events <n>", "most events per batch (at least 1)", wholeNumber(1), 500)
    .option("--batch-bytes <n>", "most bytes per batch (at least 1)", wholeNumber(1), 512 * 1024)
    .option("--linger <ms>", "how long a batch waits to fill, ms", wholeNumber(0), 50)
    .option("--no-progress", "no progress bar")
    .action(action(async (file: string, options: PostOptions, command: Command) => post(contextOf(command), file, options)));
}

async function post(ctx: CommandContext, file: string, options: PostOptions): Promise<number> {
  const path = resolve(file);
  const input = await scanNdjson(path);
  const statePath = options.state ?? `.flux/post-${options.stream}-${basename(path)}.json`;
  if (options.restart) await rm(statePath, { force: true });
  const store = new FileStore(resolve(statePath), { path, stream: options.stream, bytes: input.bytes, lines: input.lines });
  const progress = new PostProgress(input.events, options.progress && !ctx.json && process.stderr.isTTY === true);
  const producer = await ctx.client.producer({
    stream: options.stream,
    store,
    ...(options.producer ? { producerId: options.producer } : {}),
    maxBatchEvents: options.batchEvents,
    maxBatchBytes: options.batchBytes,
    lingerMs: options.linger,
    onAck: (batch) => progress.acked(batch.events.length, batch.seq),
  });
  const before = producer.totals;
  progress.start(before);
  // Ctrl-C stops at once: every batch was saved before it was sent, so the next run resends it.
  const onSigint = () => {
    progress.stop();
    process.stderr.write(`interrupted: ${producer.totals.events} of ${input.events} events acknowledged; run the same command again to resume (state in ${statePath})\n`);
    process.exit(EXIT.INTERRUPTED);
  };
  process.once("SIGINT", onSigint);
  await sendLines(producer, path, lineOf(producer.state.pending?.tag) ?? lineOf(producer.state.ackedTag) ?? 0);
  await producer.close();
  progress.stop();
  const totals = producer.totals;
  ctx.print({ stream: options.stream, producer: producer.producerId, file: path, fileEvents: input.events, totals, thisRun: diff(totals, before), state: statePath }, () => summary(input.events, totals, before, producer.producerId));
  return totals.rejectedBatches > 0 ? EXIT.REFUSED : EXIT.OK;
}

/** Queues every event after `fromLine` (the line of the last batch saved). */
async function sendLines(producer: Producer, path: string, fromLine: number): Promise<void> {
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of lines) {
      line++;
      if (line <= fromLine || text.trim() === "") continue;
      await producer.send(JSON.parse(text), { line });
    }
  } finally {
    lines.close();
  }
}

function diff(after: ProducerTotals, before: ProducerTotals): ProducerTotals {
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - before[k as keyof ProducerTotals]])) as ProducerTotals;
}

function summary(fileEvents: number, t: ProducerTotals, before: ProducerTotals, producerId: string): string {
  const run = diff(t, before);
  if (run.batches === 0 && run.rejectedBatches === 0 && before.batches > 0) {
    return `nothing left to post: all ${t.events} events were acknowledged before, as producer ${producerId} (--restart posts the file again under a new producer id)`;
  }
  const lines = [
    `posted ${t.events} of ${fileEvents} events in ${t.batches} batches as producer ${producerId}${before.batches > 0 ? ` (this run: ${run.events} events in ${run.batches} batches)` : ""}`,
    `resent batches the server already held: ${t.duplicateBatches}`,
  ];
  if (t.accepted + t.filtered + t.late > 0) lines.push(`records: ${t.accepted} accepted, ${t.filtered} filtered out, ${t.late} too late`);
  if (t.rejectedBatches > 0) lines.push(`REFUSED: ${t.rejectedBatches} batches (${t.rejectedEvents} events) were refused and not applied`);
  return lines.join("\n");
}
