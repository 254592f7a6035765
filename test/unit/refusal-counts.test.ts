/** Refusal counts for the dashboard (issue 13): per minute, stream and code, a bounded window. */
import { describe, expect, it } from "vitest";
import { addRefusal, recentRefusals, REFUSAL_WINDOW_MS } from "../../shared/ingest/refusal-counts.ts";
import type { RefusalCount } from "../../shared/wire/ingest-stats.ts";

const T = 1_700_000_080_000; // 40 s into a minute

describe("refusal counts", () => {
  it("counts per minute, stream and code", () => {
    let counts: RefusalCount[] = [];
    for (const [stream, code, at] of [["s", "UNAVAILABLE", T], ["s", "UNAVAILABLE", T + 10_000], ["s", "INVALID_EVENT", T], ["t", "UNAVAILABLE", T], ["s", "UNAVAILABLE", T + 30_000]] as const) {
      counts = addRefusal(counts, stream, code, at);
    }
    const minute = T - 40_000;
    expect(recentRefusals(counts, T + 30_000)).toEqual([
      { minuteStartMs: minute, stream: "s", code: "UNAVAILABLE", count: 2 },
      { minuteStartMs: minute, stream: "s", code: "INVALID_EVENT", count: 1 },
      { minuteStartMs: minute, stream: "t", code: "UNAVAILABLE", count: 1 },
      { minuteStartMs: minute + 60_000, stream: "s", code: "UNAVAILABLE", count: 1 },
    ]);
  });

  it("forgets minutes older than the window and does not change its input", () => {
    const first = addRefusal([], "s", "UNAVAILABLE", T);
    const later = addRefusal(first, "s", "UNAVAILABLE", T + REFUSAL_WINDOW_MS);
    expect(first).toEqual([{ minuteStartMs: T - 40_000, stream: "s", code: "UNAVAILABLE", count: 1 }]);
    expect(later).toEqual([{ minuteStartMs: T - 40_000 + REFUSAL_WINDOW_MS, stream: "s", code: "UNAVAILABLE", count: 1 }]);
    expect(recentRefusals(first, T + REFUSAL_WINDOW_MS)).toEqual([]);
  });

  it("stays bounded: past 500 rows, new streams count together under *", () => {
    let counts: RefusalCount[] = [];
    for (let i = 0; i < 600; i++) counts = addRefusal(counts, `s${i}`, "UNKNOWN_STREAM", T);
    expect(counts).toHaveLength(501);
    expect(counts.find((row) => row.stream === "*")?.count).toBe(100);
    expect(addRefusal(counts, "s3", "UNKNOWN_STREAM", T).find((row) => row.stream === "s3")?.count).toBe(2);
  });
});
