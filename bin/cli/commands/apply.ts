/**
 * `flux apply -f FILE…`: declares the streams and creates the dataflows a JSON or YAML file
 * lists, streams first. Every spec is checked with the API's own schemas before anything
 * is sent; re-applying the same file answers `unchanged`.
 */
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { DataflowSpecSchema } from "../../../shared/dataflow-checks/dataflow-spec-schema.ts";
import { NameSchema } from "../../../shared/wire/dataflow-spec.ts";
import { StreamSchemaSchema } from "../../../shared/wire/stream-schema.ts";
import type { DataflowSpecInput, StreamSchemaInput } from "../../../shared/client/flux-client.ts";
import { action, contextOf } from "../context.ts";
import { UsageError } from "../exit-codes.ts";
import { describeIssues } from "../../../shared/http/describe-issues.ts";

/** The file: `{ "streams": { name: declaration }, "dataflows": { id: spec } }`, either part optional. */
const ApplyFileSchema = z.strictObject({
  streams: z.record(NameSchema, StreamSchemaSchema).optional(),
  dataflows: z.record(NameSchema, DataflowSpecSchema).optional(),
});

interface Item {
  kind: "stream" | "dataflow";
  name: string;
  body: unknown;
}

/** Reads and checks one file. @throws UsageError naming the file and the fields at fault */
function readApplyFile(path: string): Item[] {
  let value: unknown;
  try {
    const text = readFileSync(path, "utf8");
    value = /\.ya?ml$/i.test(path) ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const parsed = ApplyFileSchema.safeParse(value);
  if (!parsed.success) throw new UsageError(`${path}: ${describeIssues(parsed.error.issues.slice(0, 5), value, [], "(root)").join("; ")}`);
  // Send what the file says (not the parsed value with defaults filled in), as curl would.
  const raw = value as { streams?: Record<string, unknown>; dataflows?: Record<string, unknown> };
  return [
    ...Object.keys(parsed.data.streams ?? {}).map((name): Item => ({ kind: "stream", name, body: raw.streams?.[name] })),
    ...Object.keys(parsed.data.dataflows ?? {}).map((name): Item => ({ kind: "dataflow", name, body: raw.dataflows?.[name] })),
  ];
}

export function applyCommand(): Command {
  return new Command("apply")
    .description("declare the streams and create the dataflows in a JSON or YAML file")
    .requiredOption("-f, --file <file...>", "spec file(s): { streams: {name: schema}, dataflows: {id: spec} }")
    .action(
      action(async (options: { file: string[] }, command: Command) => {
        const ctx = contextOf(command);
        const items = options.file.flatMap(readApplyFile).sort((a, b) => (a.kind === b.kind ? 0 : a.kind === "stream" ? -1 : 1));
        const applied: { kind: string; name: string; status: string }[] = [];
        for (const item of items) {
          const answer =
            item.kind === "stream"
              ? await ctx.client.putStream(item.name, item.body as StreamSchemaInput)
              : await ctx.client.putDataflow(item.name, item.body as DataflowSpecInput);
          applied.push({ kind: item.kind, name: item.name, status: answer.status });
          if (!ctx.json) process.stdout.write(`${item.kind} ${item.name}: ${answer.status}\n`);
        }
        if (ctx.json) ctx.print({ applied }, () => "");
      }),
    );
}
