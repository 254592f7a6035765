/**
 * Keeps `shared/` readable bottom-up (issue 26): no import circle between its files, and none
 * between its folders (each subfolder one node, each top-level file its own). Type-only imports
 * count, because a reader follows them too. A failure prints the circle as a path.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const SHARED = join(ROOT, "shared");

/** Static `import`/`export … from`, side-effect `import "…"` and dynamic `import("…")` with a literal. */
const SPECIFIER = /^\s*(?:import|export)\s[^;"'`]*?\bfrom\s*["']([^"']+)["']|^\s*import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm;

type Graph = Map<string, Set<string>>;

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourcesUnder(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** The file a relative specifier names (as written, or with `.ts` / `/index.ts` added). */
function resolveSpecifier(from: string, specifier: string): string {
  const base = resolve(dirname(from), specifier);
  const found = [base, `${base}.ts`, join(base, "index.ts")].find((path) => existsSync(path) && path.endsWith(".ts"));
  if (found === undefined) throw new Error(`${relative(ROOT, from)}: cannot resolve "${specifier}"`);
  return found;
}

/** Each shared/ file (relative to the repo) to the shared/ files it imports. */
function fileGraph(): Graph {
  const graph: Graph = new Map();
  for (const file of sourcesUnder(SHARED)) {
    const targets = [...readFileSync(file, "utf8").matchAll(SPECIFIER)]
      .map((m) => m[1] ?? m[2] ?? m[3] ?? "")
      .filter((specifier) => specifier.startsWith("."))
      .map((specifier) => resolveSpecifier(file, specifier))
      .filter((target) => target.startsWith(`${SHARED}/`));
    graph.set(relative(ROOT, file), new Set(targets.map((target) => relative(ROOT, target))));
  }
  return graph;
}

/** `shared/x/…/f.ts` → `shared/x/`, `shared/f.ts` → itself. */
function folderOf(file: string): string {
  const parts = file.split("/");
  return parts.length > 2 ? `${parts[0]}/${parts[1]}/` : file;
}

function folderGraph(files: Graph): Graph {
  const graph: Graph = new Map();
  for (const [file, targets] of files) {
    const edges = graph.get(folderOf(file)) ?? new Set<string>();
    for (const target of targets) if (folderOf(target) !== folderOf(file)) edges.add(folderOf(target));
    graph.set(folderOf(file), edges);
  }
  return graph;
}

/** One circle per back edge of a depth-first walk, each as `a -> b -> c -> a`. */
function circles(graph: Graph): string[] {
  const done = new Set<string>();
  const path: string[] = [];
  const found: string[] = [];
  const visit = (node: string): void => {
    path.push(node);
    for (const next of [...(graph.get(node) ?? [])].sort()) {
      const at = path.indexOf(next);
      if (at >= 0) found.push([...path.slice(at), next].join(" -> "));
      else if (!done.has(next)) visit(next);
    }
    path.pop();
    done.add(node);
  };
  for (const node of [...graph.keys()].sort()) if (!done.has(node)) visit(node);
  return found;
}

describe("shared/ import graph (issue 26)", () => {
  const files = fileGraph();

  it("reads the shared sources and their imports", () => {
    expect(files.size).toBeGreaterThan(100);
    expect(files.get("shared/openapi.ts")).toContain("shared/wire/api.ts");
  });

  it("has no import circle between files", () => {
    expect(circles(files)).toEqual([]);
  });

  it("has no import circle between folders", () => {
    expect(circles(folderGraph(files))).toEqual([]);
  });

  it("would catch a circle and print it as a path", () => {
    const graph: Graph = new Map([["a", new Set(["b"])], ["b", new Set(["c"])], ["c", new Set(["a"])]]);
    expect(circles(graph)).toEqual(["a -> b -> c -> a"]);
    expect(folderOf("shared/operators/sketches/hyperloglog.ts")).toBe("shared/operators/");
  });
});
