import { createInterface } from "node:readline";
const t0 = Date.now(); let last = t0;
for await (const line of createInterface({ input: process.stdin })) { const now = Date.now(); if (line.includes("TRACE") || line.startsWith("{")) { console.log(`${String(now - t0).padStart(7)} +${String(now - last).padStart(5)} ${line.slice(0, 160)}`); last = now; } }
