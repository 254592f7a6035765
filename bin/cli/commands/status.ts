/**
 * `flux status [--watch]`: per dataflow, a table of partitions (status, epoch, primary and
 * standby with their LSNs, lag, late records, key groups, the primary's open entries,
 * recovery), for a stage a table of the edges into it (results produced, delivered and
 * acknowledged), and its recent takeovers and recoveries.
 */
import { Command } from "commander";
import type { StatusResponse } from "../../../shared/wire/api.ts";
import { action, contextOf } from "../context.ts";
import { wholeNumber } from "../numbers.ts";
import { clock, table } from "../output.ts";

type DataflowStatus = StatusResponse["dataflows"][number];
type Replica = DataflowStatus["partitions"][number]["replicas"][number];

function replicaCell(r: Replica | undefined): string {
  if (!r) return "-";
  if (r.error) return `${r.name} (DOWN: ${r.error.slice(0, 40)})`;
  return `${r.name} lsn ${r.lsn ?? "?"}${r.missedProbes > 0 ? ` (${r.missedProbes} missed)` : ""}`;
}

/** The readable status of one dataflow. */
function describeDataflow(d: DataflowStatus, recentEvents = 5): string {
  const rows = d.partitions.map((p) => {
    const primary = p.replicas.find((r) => r.role === "primary") ?? p.replicas[0];
    const standby = p.replicas.find((r) => r !== primary && r.role === "standby");
    const lag = standby?.lag ?? null;
    const recovery = p.recovery ? `${p.recovery.phase} ${p.recovery.replica}` : "-";
    return [String(p.partition), p.status, String(p.epoch), replicaCell(primary), replicaCell(standby), lag === null ? "-" : String(lag), String(primary?.lateRecords ?? 0), String(p.keyGroups), String(primary?.openEntries ?? "-"), String(primary?.eventsPerSecond ?? "-"), recovery];
  });
  const input = d.stream === null ? `from ${d.from.join(", ")}` : `stream ${d.stream}`;
  const lines = [`dataflow ${d.id} (${input})${d.ready ? "" : " NOT READY"}`, table([["PART", "STATUS", "EPOCH", "PRIMARY", "STANDBY", "LAG", "LATE", "GROUPS", "ENTRIES", "EV/S", "RECOVERY"], ...rows])];
  if (d.edges.length > 0) {
    const n = (x: number | null) => (x === null ? "?" : String(x));
    const edges = d.edges.map((e) => [`${e.upstream}/p${e.upstreamPartition}`, `p${e.partition}`, n(e.produced), n(e.delivered), n(e.acknowledged), n(e.lag)]);
    lines.push(table([["FROM", "TO", "PRODUCED", "DELIVERED", "ACKED", "LAG"], ...edges]));
  }
  const events = d.events.slice(-recentEvents);
  if (events.length > 0) lines.push("recent:", ...events.map((e) => `  ${clock(e.at)}  p${e.partition}  ${e.kind}  ${e.detail}`));
  return lines.join("\n");
}

export function statusCommand(): Command {
  return new Command("status")
    .description("partitions, roles, epochs, LSNs, lag and recent takeovers of every dataflow")
    .option("-w, --watch", "redraw until Ctrl-C")
    .option("--interval <ms>", "redraw interval with --watch, ms (at least 1)", wholeNumber(1), 1000)
    .action(
      action(async (options: { watch?: boolean; interval: number }, command: Command) => {
        const ctx = contextOf(command);
        for (;;) {
          const status = await ctx.client.status();
          const text = status.dataflows.map((d) => describeDataflow(d)).join("\n\n") || "no dataflows";
          if (options.watch && !ctx.json) process.stdout.write("\x1b[2J\x1b[H");
          ctx.print(status, () => (options.watch ? `${new Date().toISOString()}  ${ctx.url}\n\n${text}` : text));
          if (!options.watch) return;
          await new Promise((resolve) => setTimeout(resolve, options.interval));
        }
      }),
    );
}
