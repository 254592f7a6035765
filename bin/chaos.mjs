#!/usr/bin/env node
// `npm run chaos -- <crash|hang|slow|wipe|heal> [dataflow] [partition] [--port N]`: injects
// a fault into the replica that is primary *now* for that partition of a dataflow running
// under `npm start` (default clicks-per-page, partition 0), looked up in the dataflow's
// routing, so the command stays right after fail-overs. `heal` heals every replica the
// partition has had (the crashed one is no longer primary by then).
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const positional = [];
let port = 8787;
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--port") port = Number(args[++i]);
  else positional.push(args[i]);
}
const [kind = "crash", dataflow = "clicks-per-page", partitionText = "0"] = positional;
const partition = Number(partitionText);
const kinds = ["crash", "hang", "slow", "wipe", "heal"];
if (!kinds.includes(kind) || !Number.isInteger(partition)) {
  console.error(`usage: npm run chaos -- <${kinds.join("|")}> [dataflow] [partition] [--port N]`);
  process.exit(2);
}

// The tokens of `npm start`'s .dev.vars, unless FLUX_TOKEN and FLUX_ADMIN_TOKEN name others (as for the CLI).
const devVars = process.env.FLUX_TOKEN && process.env.FLUX_ADMIN_TOKEN ? "" : readFileSync(".dev.vars", "utf8");
const token = process.env.FLUX_TOKEN || /^FLUX_API_TOKEN=(.*)$/m.exec(devVars)?.[1]?.trim();
const adminToken = process.env.FLUX_ADMIN_TOKEN || /^FLUX_ADMIN_TOKEN=(.*)$/m.exec(devVars)?.[1]?.trim();
const base = `http://127.0.0.1:${port}`;

const res = await fetch(`${base}/v1/dataflows/${encodeURIComponent(dataflow)}`, { headers: { authorization: `Bearer ${token}` } }).catch((err) => {
  console.error(`nothing answers on ${base} (${err.message}): is npm start running?`);
  process.exit(1);
});
if (!res.ok) {
  console.error(`dataflow ${dataflow}: ${res.status} ${await res.text()}`);
  process.exit(1);
}
const route = (await res.json()).dataflow.partitions.find((p) => p.partition === partition);
if (!route) {
  console.error(`dataflow ${dataflow} has no partition ${partition}`);
  process.exit(1);
}
// Replicas are named by generation (…/g0, …/g1, …): `heal` reaches every one the partition has had.
const generationOf = (name) => Number(/\/g(\d+)$/.exec(name ?? "")?.[1] ?? 0);
const newest = Math.max(generationOf(route.primary), generationOf(route.standby));
const targets = kind === "heal" ? Array.from({ length: newest + 1 }, (_, g) => `${dataflow}/p${partition}/g${g}`) : [route.primary];
for (const replica of targets) {
  const reply = await fetch(`${base}/v1/admin/replicas/${encodeURIComponent(replica)}/fault`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ kind }),
  });
  const text = await reply.text();
  if (kind !== "heal" || reply.ok) console.log(`${kind} ${replica} (epoch ${route.epoch}, ${route.status}): ${reply.status} ${text}`);
}
if (kind !== "heal") {
  console.log(`watch it: curl -H 'authorization: Bearer ${token}' '${base}/v1/status?view=summary'`);
  console.log(`undo it:  npm run chaos -- heal ${dataflow} ${partition}${port === 8787 ? "" : ` --port ${port}`}`);
}
