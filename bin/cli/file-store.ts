/**
 * A producer store in a JSON file for Node (issue 13): every save is written to a
 * temporary file, flushed to disk and renamed over the old one, so a crash at any moment
 * leaves either the previous state or the new one. The file also names the input it
 * belongs to, so a resumed `flux post` refuses a file that changed.
 */
import { mkdir, open, readFile, rename } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { ProducerStateSchema, type ProducerState, type ProducerStore } from "../../shared/client/producer-store.ts";
import { UsageError } from "./exit-codes.ts";

/** What the saved state was produced from. */
const InputSchema = z.object({ path: z.string(), stream: z.string(), bytes: z.number(), lines: z.number() });
export type InputIdentity = z.infer<typeof InputSchema>;

const FileSchema = z.object({ v: z.literal(1), input: InputSchema, producer: ProducerStateSchema });

export class FileStore implements ProducerStore {
  private readonly path: string;
  private readonly input: InputIdentity;

  constructor(path: string, input: InputIdentity) {
    this.path = path;
    this.input = input;
  }

  /** @throws UsageError (exit 2) when the file belongs to another input, or is not a saved state */
  async load(): Promise<ProducerState | null> {
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
    let parsed: ReturnType<typeof FileSchema.safeParse> | null = null;
    try {
      parsed = FileSchema.safeParse(JSON.parse(text));
    } catch {
      // Not JSON: refused below like any other file that is no saved state.
    }
    if (!parsed?.success) throw new UsageError(`${this.path} is not a saved flux post state (--state names another file)`);
    const saved = parsed.data.input;
    if (saved.path !== this.input.path || saved.stream !== this.input.stream || saved.bytes !== this.input.bytes || saved.lines !== this.input.lines) {
      throw new UsageError(
        `${this.path} belongs to ${saved.path} (${saved.bytes} bytes, ${saved.lines} lines) → stream '${saved.stream}', and this input differs (changed since?): --restart posts it again under a new producer id, --state keeps another state file`,
      );
    }
    return parsed.data.producer;
  }

  async save(state: ProducerState): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.tmp`;
    const handle = await open(tmp, "w");
    try {
      await handle.writeFile(JSON.stringify({ v: 1, input: this.input, producer: state }));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, this.path);
  }
}
