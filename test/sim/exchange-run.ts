/**
 * One seeded run of the exchange model (`exchange-sim.ts`): random actions and faults on
 * both stages, then a fault-free settle, then the checks against a single-node reference:
 * every upstream output routed to each downstream partition held there exactly once, in
 * order per source; every window closed on the effective watermark holding exactly the
 * reference's records; no record late; both downstream replicas equal.
 */
import { sourceKey } from "../../shared/exchange/exchange-types.ts";
import { D_WINDOW_MS, downWatermark, ExchangeSim, windowStart, type ExchangeResult, type ExchangeVariant, type Message } from "./exchange-sim.ts";

const SETTLE_ROUNDS = 3_000;

export function runExchange(seed: number, variant: ExchangeVariant | null = null): ExchangeResult {
  const sim = new ExchangeSim(seed, variant);
  const { r } = sim;
  const pu = sim.ups.length;
  const pd = sim.downs.length;
  const actions = 300 + r.int(500);
  for (let step = 0; step < actions; step++) {
    sim.now += 1;
    for (const d of sim.downs) if (d.downFor > 0) d.downFor -= 1;
    const roll = r.next();
    if (roll < 0.25) sim.logUp(r.int(pu));
    else if (roll < 0.35) sim.replicateUp(r.int(pu));
    else if (roll < 0.5) sim.deliverUp(r.int(pu));
    else if (roll < 0.75) deliverOne(sim);
    else if (roll < 0.85) sim.replicateDown(r.int(pd));
    else if (roll < 0.9) sim.trimUp(r.int(pu));
    else if (roll < 0.95) sim.timeoutUp(r.int(pu), r.int(pd));
    else if (roll < 0.975) sim.crashUp(r.int(pu));
    else sim.crashDown(r.int(pd), r.chance(0.3) ? r.int(120) : 0);
  }
  settle(sim);
  check(sim);
  return { seed, problems: sim.problems, stats: sim.stats };
}

/** The network delivers one message, picked at random (reordering); some are dropped, some duplicated. */
function deliverOne(sim: ExchangeSim): void {
  if (sim.net.length === 0) return;
  const at = sim.r.int(sim.net.length);
  const message = sim.net[at] as Message;
  const roll = sim.r.next();
  if (roll < 0.9) sim.net.splice(at, 1);
  if (roll < 0.05) return;
  sim.receive(message);
}

/** Faults stop: messages go in order, both stages replicate and deliver until nothing moves. */
function settle(sim: ExchangeSim): void {
  for (const d of sim.downs) d.downFor = 0;
  const flush = () => {
    while (sim.net.length > 0) sim.receive(sim.net.shift() as Message);
  };
  for (let round = 0; round < SETTLE_ROUNDS; round++) {
    sim.now += 1_000;
    flush();
    sim.downs.forEach((_, j) => sim.replicateDown(j));
    flush();
    const before = sim.stats.deliveries;
    sim.ups.forEach((u, i) => {
      u.cursors.forEach((_, j) => sim.timeoutUp(i, j));
      sim.logUp(i);
      sim.replicateUp(i);
      sim.trimUp(i);
      sim.deliverUp(i);
    });
    const logged = sim.ups.every((u) => u.primaryLen === u.steps.length && u.standbyLen === u.steps.length);
    if (logged && sim.stats.deliveries === before && sim.net.length === 0) return;
  }
  sim.problems.push(`does not settle in ${SETTLE_ROUNDS} rounds`);
}

function check(sim: ExchangeSim): void {
  sim.downs.forEach((d, j) => {
    const where = `d${j}`;
    const reference = new Map<string, string[]>();
    sim.ups.forEach((u, i) => {
      const key = sourceKey({ dataflow: "up", partition: i });
      const mine = u.routed.filter((o) => o.partition === j && o.record !== null);
      const held = d.primary.held[key] ?? [];
      const want = mine.map((o) => o.outputSeq);
      if (JSON.stringify(held) !== JSON.stringify(want)) sim.problems.push(`${where} holds ${key} outputs [${held.join(",")}], the reference [${want.join(",")}]`);
      const hw = d.primary.progress[key]?.hw ?? 0;
      if (hw !== u.routed.length) sim.problems.push(`${where} covers ${key} through ${hw} of ${u.routed.length}`);
      for (const o of mine) {
        if (o.record === null) continue;
        const start = String(windowStart(o.record));
        reference.set(start, [...(reference.get(start) ?? []), `${key}#${o.outputSeq}`]);
      }
    });
    if (JSON.stringify(d.primary) !== JSON.stringify(d.standby)) sim.problems.push(`${where}: primary and standby differ after settling`);
    for (const late of d.primary.late) sim.problems.push(`${where}: late record ${late}`);
    const watermarkMs = downWatermark(sim, j);
    const lastMarks = sim.ups.map((u) => u.steps[u.steps.length - 1]?.watermarkMs ?? null);
    const expectedMark = lastMarks.includes(null) ? null : Math.min(...(lastMarks as number[]));
    if (watermarkMs !== expectedMark) sim.problems.push(`${where}: effective watermark ${watermarkMs}, the sources end at ${expectedMark}`);
    const starts = new Set([...reference.keys(), ...Object.keys(d.primary.closed)]);
    for (const start of starts) {
      const due = watermarkMs !== null && Number(start) + D_WINDOW_MS <= watermarkMs;
      const want = due ? [...(reference.get(start) ?? [])].sort() : null;
      const closed = d.primary.closed[start];
      const got = closed ? [...closed].sort() : null;
      if (JSON.stringify(got) !== JSON.stringify(want)) sim.problems.push(`${where}: window ${start} closed with ${JSON.stringify(got)}, the reference ${JSON.stringify(want)} (watermark ${watermarkMs})`);
    }
  });
}
