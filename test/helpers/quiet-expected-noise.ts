/**
 * Vitest global setup (issue 11): keeps `npm test` output for real failures. Drops, in
 * the main process where the workerd pool writes them, log entries that every run prints
 * by design: the "Uncaught (in promise)" report workerd makes for each Durable Object RPC
 * that rejects with an *injected* fault (workers-sdk#14736; the fault tests expect those
 * rejections), the pool's note that `node:inspector` is unavailable in workerd (vitest
 * imports it for profiling only), and wrangler's "missing secrets" warning (the test
 * bindings supply them). At the end it prints one line counting what it dropped.
 * docs/TESTING.md lists what remains.
 */

/** A log entry to drop, and the name its count is reported under. */
const EXPECTED: { name: string; test: (text: string) => boolean }[] = [
  // Also a primary's own spread-close step stopped by an injected fault (platform/replica-ports.ts logs it).
  { name: "injected-fault rejections", test: (t) => (t.includes("Uncaught (in promise)") || t.includes("a spread close's step failed")) && /\(injected\b|hung \(injected\)/.test(t) },
  { name: "node:inspector notes", test: (t) => t.includes("node:inspector") || t.includes("specifier=node%3Ainspector") },
  { name: "the invalid-configuration test's log line", test: (t) => t.includes("invalid configuration: FLUX_MAX_BODY_BYTES (docs/CONFIGURATION.md") },
  { name: "test-secret warnings", test: (t) => t.includes("Missing required secrets: FLUX_API_TOKEN") || t.startsWith("Using secrets defined in process.env") },
];

type Write = (chunk: unknown, ...rest: unknown[]) => boolean;
/** The two streams, typed by hand so this setup file needs no Node typings. */
const streams = process as unknown as { stdout: { write: Write }; stderr: { write: Write } };

/** Wraps a stream's `write` so expected entries are counted instead of printed. */
function filter(stream: { write: Write }, dropped: Map<string, number>): () => void {
  const original = stream.write.bind(stream);
  stream.write = (chunk, ...rest) => {
    const text = typeof chunk === "string" ? chunk : chunk instanceof Uint8Array ? new TextDecoder().decode(chunk) : "";
    // workerd colours its entries with ANSI escapes.
    const expected = EXPECTED.find((e) => e.test(text.replace(/\x1b\[[0-9;]*m/g, "")));
    if (!expected) return original(chunk, ...rest);
    dropped.set(expected.name, (dropped.get(expected.name) ?? 0) + 1);
    return true;
  };
  return () => {
    stream.write = original;
  };
}

/** Installs the filters; the returned teardown restores the streams and prints the counts. */
export default function setup(): () => void {
  const dropped = new Map<string, number>();
  const restore = [filter(streams.stdout, dropped), filter(streams.stderr, dropped)];
  return () => {
    for (const undo of restore) undo();
    if (dropped.size > 0) console.log(`expected output not shown (see docs/TESTING.md): ${[...dropped].map(([name, n]) => `${n} ${name}`).join(", ")}`);
  };
}
