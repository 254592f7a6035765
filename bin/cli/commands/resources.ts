/** `flux ls`, `flux get` and `flux rm`: dataflows and declared streams. */
import { Command } from "commander";
import type { DataflowView } from "../../../shared/wire/api.ts";
import { sourcesOf } from "../../../shared/wire/dataflow-spec.ts";
import { action, contextOf } from "../context.ts";
import { UsageError } from "../exit-codes.ts";
import { table } from "../output.ts";

function health(d: DataflowView): string {
  const counts = new Map<string, number>();
  for (const p of d.partitions) counts.set(p.status, (counts.get(p.status) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${n} ${status}`).join(", ") || "-";
}

export function lsCommand(): Command {
  return new Command("ls")
    .description("list dataflows (default) or declared streams")
    .argument("[kind]", "dataflows or streams", "dataflows")
    .action(
      action(async (kind: string, _options: object, command: Command) => {
        const ctx = contextOf(command);
        if (kind === "streams") {
          const streams = await ctx.client.listStreams();
          ctx.print({ streams }, () => table([["STREAM", "FIELDS", "ADDITIONAL"], ...streams.map((s) => [s.name, String(Object.keys(s.schema.fields).length), String(s.schema.additionalFields)])]));
          return;
        }
        if (kind !== "dataflows") throw new UsageError(`ls: unknown kind '${kind}' (dataflows or streams)`);
        const dataflows = await ctx.client.listDataflows();
        ctx.print({ dataflows }, () =>
          table([["DATAFLOW", "STREAM", "PARTITIONS", "REPLICATION", "READY", "HEALTH"], ...dataflows.map((d) => [d.id, d.spec.stream ?? `from ${sourcesOf(d.spec).join(",")}`, String(d.spec.partitions), String(d.spec.replication), d.deleting ? "deleting" : String(d.ready), health(d)])]),
        );
      }),
    );
}

export function getCommand(): Command {
  return new Command("get")
    .description("show a dataflow (flux get ID, or flux get dataflow ID) or a stream (flux get stream NAME)")
    .argument("<kindOrId>", "dataflow id, or the word dataflow or stream")
    .argument("[name]", "the name, after a kind")
    .action(
      action(async (kindOrId: string, name: string | undefined, _options: object, command: Command) => {
        const ctx = contextOf(command);
        const kind = name === undefined ? "dataflow" : kindOrId;
        const id = name ?? kindOrId;
        if (kind !== "dataflow" && kind !== "stream") throw new UsageError(`get: unknown kind '${kind}' (dataflow or stream)`);
        const value = kind === "stream" ? { stream: await ctx.client.getStream(id) } : { dataflow: await ctx.client.getDataflow(id) };
        ctx.print(value, () => JSON.stringify(value, null, 2));
      }),
    );
}

export function rmCommand(): Command {
  return new Command("rm")
    .description("delete a dataflow (its replicas drop their state)")
    .argument("<id>", "dataflow id")
    .action(
      action(async (id: string, _options: object, command: Command) => {
        const ctx = contextOf(command);
        const answer = await ctx.client.deleteDataflow(id);
        ctx.print(answer, () => (answer.status === "deleted" ? `dataflow ${id}: deleted` : `dataflow ${id}: deleting (waiting for ${answer.pending.join(", ")}; the monitor keeps retrying)`));
      }),
    );
}
