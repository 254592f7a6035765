/**
 * The browser SDK's size budget (docs/CLIENT.md, "Bundle size"): `client/browser.ts`, the
 * module a browser app imports, bundled and minified as ESM with esbuild, gzipped. Over the
 * budget, the failure names the inputs that take the most bytes, so a reader knows what to cut;
 * and no server-side module (spec checks, operators, replica steps) may be among the inputs.
 */
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build, type Metafile } from "esbuild";
import { describe, expect, it } from "vitest";

/** Gzipped bytes the minified browser entry may take. */
const BUDGET_BYTES = 42 * 1024;

/** Server-side code a browser never needs (issue 26: the bundle pulled in the server's spec checks). */
const SERVER_ONLY = /^shared\/(dataflow-checks|operators|replica|router|monitor|ingest|checkpoint|closing)\//;

const ENTRY = fileURLToPath(new URL("../../../client/browser.ts", import.meta.url));

/** The `count` inputs that put the most bytes into the output, as `bytes path` lines. */
function biggestInputs(metafile: Metafile, count: number): string[] {
  const inputs = Object.values(metafile.outputs).flatMap((output) => Object.entries(output.inputs));
  return inputs
    .sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput)
    .slice(0, count)
    .map(([path, input]) => `${String(input.bytesInOutput).padStart(8)} ${path}`);
}

describe("browser bundle", () => {
  it("the minified browser entry fits its gzip budget", async () => {
    const result = await build({ entryPoints: [ENTRY], bundle: true, minify: true, format: "esm", platform: "browser", write: false, metafile: true, logLevel: "silent" });
    const code = result.outputFiles[0]?.contents ?? new Uint8Array();
    const gzipBytes = gzipSync(code, { level: 9 }).length;
    const report = [`browser entry: ${code.length} bytes minified, ${gzipBytes} bytes gzip (budget ${BUDGET_BYTES})`, "biggest inputs (minified bytes):", ...biggestInputs(result.metafile, 15)].join("\n");
    console.log(report);
    expect(gzipBytes, report).toBeLessThanOrEqual(BUDGET_BYTES);
    expect(Object.keys(result.metafile.inputs).filter((path) => SERVER_ONLY.test(path))).toEqual([]);
  });
});
