// Cloudflare's published prices (the table the report prints) and the arithmetic that turns
// counted calls, rows, requests and CPU into US dollars per million events or per idle day.

export const PRICES = {
  date: "2026-12-01",
  lines: [
    { item: "Durable Objects requests (each RPC call counts as one)", unit: "per million", usd: 0.15 },
    { item: "SQLite rows written", unit: "per million", usd: 1.0 },
    { item: "SQLite rows read", unit: "per million", usd: 0.001 },
    { item: "Workers requests", unit: "per million", usd: 0.3 },
    { item: "CPU time", unit: "per million ms", usd: 0.02 },
    { item: "Durable Objects duration (billed at 128 MB per active object)", unit: "per million GB-s", usd: 12.5 },
  ],
};
const PER = { call: 0.15e-6, rowWritten: 1e-6, rowRead: 0.001e-6, workerRequest: 0.3e-6, cpuMs: 0.02e-6, objectSecond: 0.125 * 12.5e-6 };

/**
 * Counter change between two `GET /v1/admin/counters` readings, minus the reads' own Worker
 * requests (`selfRequests` per read, measured once by {@link counterSelfCost}).
 */
export function counterDelta(before, after, selfRequests = 0) {
  if (!before || !after) return null;
  const calls = {};
  for (const [method, n] of Object.entries(after.calls)) {
    const d = n - (before.calls[method] ?? 0);
    if (d > 0) calls[method] = d;
  }
  return {
    calls,
    callsTotal: after.callsTotal - before.callsTotal,
    rowsRead: after.rowsRead - before.rowsRead,
    rowsWritten: after.rowsWritten - before.rowsWritten,
    workerRequests: after.workerRequests - before.workerRequests - selfRequests,
  };
}

/** Worker requests one counters read adds to the counters themselves (0 or 1). */
export async function counterSelfCost(read) {
  const a = await read();
  const b = await read();
  return a && b ? b.workerRequests - a.workerRequests : 0;
}

/** Per 1,000 events, and US dollars per million events with each price line apart. */
export function costPerEvents(delta, events, cpuMicrosPerEvent) {
  if (!delta || events === 0) return null;
  const per1k = (n) => (n * 1000) / events;
  const usdPerM = (n, price) => (n / events) * 1e6 * price;
  const lines = {
    calls: usdPerM(delta.callsTotal, PER.call),
    rowsWritten: usdPerM(delta.rowsWritten, PER.rowWritten),
    rowsRead: usdPerM(delta.rowsRead, PER.rowRead),
    workerRequests: usdPerM(delta.workerRequests, PER.workerRequest),
    cpu: cpuMicrosPerEvent * 1e3 * PER.cpuMs,
  };
  return {
    per1k: {
      calls: per1k(delta.callsTotal),
      rowsWritten: per1k(delta.rowsWritten),
      rowsRead: per1k(delta.rowsRead),
      workerRequests: per1k(delta.workerRequests),
      byMethod: Object.fromEntries(Object.entries(delta.calls).map(([m, n]) => [m, per1k(n)])),
    },
    usdPerMillion: { ...lines, total: Object.values(lines).reduce((a, b) => a + b, 0) },
  };
}

/** What an idle period costs, scaled to an hour and a day. */
export function idleCost({ seconds, calls, rowsWritten, rowsRead, objectSeconds }) {
  const perHour = (n) => (n * 3600) / seconds;
  const hour = { calls: perHour(calls), rowsWritten: perHour(rowsWritten), rowsRead: perHour(rowsRead), objectSeconds: perHour(objectSeconds) };
  const usdPerDay = {
    calls: hour.calls * 24 * PER.call,
    rowsWritten: hour.rowsWritten * 24 * PER.rowWritten,
    rowsRead: hour.rowsRead * 24 * PER.rowRead,
    duration: hour.objectSeconds * 24 * PER.objectSecond,
  };
  return { perHour: hour, usdPerDay: { ...usdPerDay, total: Object.values(usdPerDay).reduce((a, b) => a + b, 0) } };
}
