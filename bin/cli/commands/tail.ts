/**
 * `flux tail DATAFLOW`: closed windows live, one line each (NDJSON with `--json`). The
 * cursor after each window is saved, so the next `flux tail` continues after the last
 * window printed; the subscription itself reconnects across disconnects and fail-overs.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { Command } from "commander";
import type { SubscribedWindow } from "../../../shared/client/subscription-frame.ts";
import { action, contextOf } from "../context.ts";
import { EXIT } from "../exit-codes.ts";
import { wholeNumber } from "../numbers.ts";
import { clockMs } from "../output.ts";

interface TailOptions {
  cursor?: string;
  cursorFile?: string;
  fromStart?: boolean;
  max?: number;
  ws?: boolean;
}

async function savedCursor(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, "utf8")).trim() || undefined;
  } catch {
    return undefined;
  }
}

function describeWindow(w: SubscribedWindow): string {
  const values = Object.entries(w.values)
    .map(([name, v]) => `${name}=${typeof v === "object" && v !== null ? JSON.stringify(v) : String(v)}`)
    .join(" ");
  return `${clockMs(w.windowStartMs)}–${clockMs(w.windowEndMs)}  ${w.key}  ${values}  (p${w.partition} #${w.outputSeq})`;
}

export function tailCommand(): Command {
  return new Command("tail")
    .description("follow a dataflow's closed windows live, resuming after the last one printed")
    .argument("<dataflow>", "dataflow id")
    .option("--cursor <cursor>", "start after this cursor (0,12,3) instead of the saved one")
    .option("--cursor-file <file>", "where the cursor is kept (default .flux/tail-<dataflow>.cursor)")
    .option("--from-start", "ignore the saved cursor and start from the first window")
    .option("--max <n>", "exit after this many windows (at least 1)", wholeNumber(1))
    .option("--ws", "subscribe over a WebSocket instead of Server-Sent Events")
    .action(
      action(async (dataflow: string, options: TailOptions, command: Command) => {
        const ctx = contextOf(command);
        const cursorFile = options.cursorFile ?? `.flux/tail-${dataflow}.cursor`;
        const cursor = options.cursor ?? (options.fromStart ? undefined : await savedCursor(cursorFile));
        const max = options.max ?? Infinity;
        // The cursor file is replaced atomically after each window, so Ctrl-C can stop at any point.
        process.once("SIGINT", () => process.exit(EXIT.INTERRUPTED));
        await mkdir(dirname(cursorFile), { recursive: true });
        let seen = 0;
        const windows = ctx.client.subscribe(dataflow, { ...(cursor ? { cursor } : {}), transport: options.ws ? "websocket" : "sse", onReconnect: (e, n, ms) => process.stderr.write(`flux tail: ${e.message}; reconnecting in ${ms} ms (attempt ${n})\n`) });
        for await (const w of windows) {
          process.stdout.write(`${ctx.json ? JSON.stringify(w) : describeWindow(w)}\n`);
          await writeFile(`${cursorFile}.tmp`, w.cursor);
          await rename(`${cursorFile}.tmp`, cursorFile);
          if (++seen >= max) break;
        }
      }),
    );
}
