import { describe, expect, it } from "vitest";
import { logPageEntries } from "../../shared/recovery-pacing/log-page.ts";
import { isIngestActive, seedPauseMs } from "../../shared/recovery-pacing/seed-pause.ts";

describe("seedPauseMs", () => {
  it("pauses `pacing` times the step's time while the survivor takes writes", () => {
    expect(seedPauseMs({ busyMs: 20, ingestActive: true }, 2.5)).toBe(50);
    expect(seedPauseMs({ busyMs: 20, ingestActive: true }, 0.5)).toBe(10);
  });

  it("pauses a partition that takes no writes 1 ms only, so writes in flight reach its log before the next step", () => {
    expect(seedPauseMs({ busyMs: 80, ingestActive: false }, 2.5)).toBe(1);
  });

  it("does not pause with pacing 0", () => {
    expect(seedPauseMs({ busyMs: 80, ingestActive: true }, 0)).toBe(0);
    expect(seedPauseMs({ busyMs: 80, ingestActive: false }, 0)).toBe(0);
  });

  it("pauses at least 1 ms, so waiting requests get the thread, and at most 250 ms", () => {
    expect(seedPauseMs({ busyMs: 0, ingestActive: true }, 2.5)).toBe(1);
    expect(seedPauseMs({ busyMs: 1_000, ingestActive: true }, 2.5)).toBe(250);
  });
});

describe("isIngestActive", () => {
  it("counts a survivor whose logged LSN moved, or one not seen before, as taking writes", () => {
    expect(isIngestActive(null, 5)).toBe(true);
    expect(isIngestActive(5, 6)).toBe(true);
    expect(isIngestActive(6, 6)).toBe(false);
  });
});

describe("logPageEntries", () => {
  const entries = (n: number, chars: number) => Array.from({ length: n }, () => ({ records: "x".repeat(chars) }));

  it("starts a catch-up with a small page, before any entry's size is known", () => {
    expect(logPageEntries(null)).toBe(8);
    expect(logPageEntries([])).toBe(8);
  });

  it("sizes the next page by the mean size of the entries just copied", () => {
    // 2,000-event fill batches of ~80k characters: one or two per call.
    expect(logPageEntries(entries(8, 80_000))).toBe(1);
    expect(logPageEntries(entries(4, 40_000))).toBe(3);
    // Small batches: many per call, at most 200.
    expect(logPageEntries(entries(8, 4_000))).toBe(32);
    expect(logPageEntries(entries(8, 10))).toBe(200);
  });

  it("asks for at least one entry, however large", () => {
    expect(logPageEntries(entries(1, 10_000_000))).toBe(1);
  });
});
