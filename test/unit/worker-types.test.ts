/**
 * The Worker's code (functions/, durable-objects/, platform/, shared/) type-checks against
 * the workerd types alone (worker-configuration.d.ts): Node's types must not reach
 * `tsc -p tsconfig.worker.json`, or a Node global (Buffer, process) in code that runs on
 * workerd would type-check (issue 26).
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TSC = fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url));

/** Runs the repo's own TypeScript on the Worker's tsconfig with `flag`; its output, one line per entry. */
function tscWorker(flag: "--listFilesOnly" | "--explainFiles"): string[] {
  return execFileSync(process.execPath, [TSC, "-p", "tsconfig.worker.json", flag], { cwd: ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }).split("\n");
}

/** On a leak, which files reference Node's types: the indented reasons `--explainFiles` gives for @types/node/index.d.ts. */
function whyNodeTypes(): string {
  const lines = tscWorker("--explainFiles");
  const start = lines.findIndex((line) => /@types\/node\/index\.d\.ts$/.test(line));
  if (start < 0) return "(run npx tsc -p tsconfig.worker.json --explainFiles)";
  const end = lines.findIndex((line, i) => i > start && !line.startsWith(" "));
  return lines.slice(start + 1, end < 0 ? undefined : end).join("\n");
}

describe("the Worker's type check", () => {
  it("sees worker-configuration.d.ts and no file of @types/node", () => {
    const files = tscWorker("--listFilesOnly");
    expect(files.some((f) => f.endsWith("/worker-configuration.d.ts"))).toBe(true);
    const leaked = files.filter((f) => f.includes("@types/node"));
    const why = leaked.length === 0 ? "" : whyNodeTypes();
    expect(leaked, `tsc -p tsconfig.worker.json reads @types/node; the Worker must type-check against worker-configuration.d.ts alone. How it gets there:\n${why}`).toEqual([]);
  });
});
