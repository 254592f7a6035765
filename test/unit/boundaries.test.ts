/**
 * Keeps `shared/` pure (STYLE.md §1): no platform imports, no wall-clock time or
 * ambient randomness, so the protocol runs unchanged in Node and the simulator.
 */
/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";

const sources = import.meta.glob<string>("../../shared/**/*.ts", { query: "?raw", import: "default", eager: true });

const FORBIDDEN_IMPORT = /(?:from\s+|import\s*\(\s*|import\s+)["'](cloudflare:[^"']*|hono(?:\/[^"']*)?|node:[^"']*|@hono\/[^"']*)["']/g;
const FORBIDDEN_CALL = /\b(Date\.now|Math\.random|crypto\.randomUUID|performance\.now)\s*\(/g;

describe("shared/ boundaries", () => {
  it("finds the shared sources", () => {
    expect(Object.keys(sources).length).toBeGreaterThan(10);
  });

  it("imports nothing from the platform, Hono or Node", () => {
    const offenders = Object.entries(sources).flatMap(([file, text]) => [...text.matchAll(FORBIDDEN_IMPORT)].map((m) => `${file}: ${m[1]}`));
    expect(offenders).toEqual([]);
  });

  it("never reads the clock or ambient randomness", () => {
    const offenders = Object.entries(sources).flatMap(([file, text]) => [...text.matchAll(FORBIDDEN_CALL)].map((m) => `${file}: ${m[1]}`));
    expect(offenders).toEqual([]);
  });

  it("would catch an offender (the patterns are live)", () => {
    expect('import { DurableObject } from "cloudflare:workers";'.match(FORBIDDEN_IMPORT)).not.toBeNull();
    expect("const t = Date.now();".match(FORBIDDEN_CALL)).not.toBeNull();
  });
});

const functionSources = import.meta.glob<string>("../../functions/**/*.ts", { query: "?raw", import: "default", eager: true });
const platformSources = import.meta.glob<string>("../../platform/**/*.ts", { query: "?raw", import: "default", eager: true });
/** A value import (not `import type`) from durable-objects/. */
const OBJECT_VALUE_IMPORT = /import\s+(?!type\b)[^;]*?from\s+["'][./]*durable-objects\/[^"']*["']/g;

describe("functions/ and platform/ boundaries (issue 12)", () => {
  it("functions/ reaches objects only through platform/, never importing code from durable-objects/", () => {
    const offenders = Object.entries(functionSources).flatMap(([file, text]) => [...text.matchAll(OBJECT_VALUE_IMPORT)].map((m) => `${file}: ${m[0]}`));
    expect(Object.keys(functionSources).length).toBeGreaterThan(5);
    expect(offenders).toEqual([]);
  });

  it("platform/ imports nothing from functions/ or durable-objects/", () => {
    const offenders = Object.entries(platformSources).filter(([, text]) => /from\s+["'][./]*(functions|durable-objects)\//.test(text)).map(([file]) => file);
    expect(Object.keys(platformSources).length).toBeGreaterThan(2);
    expect(offenders).toEqual([]);
  });

  it("would catch a value import from durable-objects/", () => {
    expect('import { withDeadline } from "../durable-objects/replica-client.ts";'.match(OBJECT_VALUE_IMPORT)).not.toBeNull();
    expect('import type { PartitionReplica } from "../../durable-objects/partition-replica.ts";'.match(OBJECT_VALUE_IMPORT)).toBeNull();
  });
});
