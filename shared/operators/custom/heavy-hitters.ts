/**
 * Example custom operator: a per-source heavy-hitter / DoS detector for network flows.
 * Key a dataflow by source address; each flow record carries its bytes and, optionally,
 * its destination. Per tumbling event-time window the operator adds up bytes and
 * packets (records) per source and counts distinct destinations exactly, up to the
 * threshold. When a window closes it emits one alert per source that sent at least
 * `minBytes` (a heavy hitter, e.g. a flood) or reached `minDestinations` distinct
 * destinations (a fan-out, e.g. a scan). Nothing else is emitted, so state stays bounded
 * by the sources active in open windows.
 *
 * It is written only against `Operator`: no logs, replicas or retries. The runtime makes
 * its alerts exactly-once across crashes and fail-overs.
 */
import * as z from "zod";
import { defineOperator } from "../define-operator.ts";
import type { Emit, Operator, ResultFilter } from "../operator.ts";
import { keyedWindowSlicing } from "../keyed-window-slices.ts";
import type { KeyedWindows } from "../keyed-window-state.ts";
import { keyedWindowMoves } from "../keyed-window-moves.ts";
import { advanceTo, isKeyedWindows, openSlotCount, openWindowResults, slotOfKey, type ToResult } from "../keyed-windows.ts";
import { addSlot, keepPreimage, openWindow } from "../keyed-window-cursor.ts";
import type { FluxRecord, WindowResult } from "../../wire/window-result.ts";

/**
 * Fields are read by path, like every field of a spec (`shared/field-path.ts`); creation
 * refuses malformed paths (`spec-checks.ts`), while stored params keep loading as before.
 */
const FieldSchema = z.string().min(1).max(256);

const ParamsSchema = z
  .strictObject({
    windowMs: z.number().int().min(1).max(86_400_000).default(10_000),
    allowedLatenessMs: z.number().int().min(0).max(86_400_000).default(0),
    bytesField: FieldSchema.default("bytes"),
    destinationField: FieldSchema.optional(),
    minBytes: z.number().positive().optional(),
    minDestinations: z.number().int().min(1).max(10_000).optional(),
  })
  .refine((p) => p.minBytes !== undefined || p.minDestinations !== undefined, { message: "set minBytes, minDestinations or both", path: ["minBytes"] })
  .refine((p) => p.minDestinations === undefined || p.destinationField !== undefined, { message: "minDestinations needs destinationField", path: ["destinationField"] });
type Params = z.output<typeof ParamsSchema>;

/** One source in one window: bytes, records, and up to `minDestinations` distinct destinations. */
interface SourceTally {
  bytes: number;
  packets: number;
  /** Distinct destinations seen, `$`-prefixed, as long as fewer than the threshold. */
  dst: Record<string, 1>;
  nDst: number;
}

/** Open windows by start (ms), then `$`-prefixed source. */
type HeavyHittersState = KeyedWindows<SourceTally>;

function create(params: Params): Operator<HeavyHittersState> {
  const { windowMs, allowedLatenessMs, minBytes, minDestinations } = params;
  const tracksDestinations = minDestinations !== undefined;

  const reasonOf = (t: SourceTally): string | null => {
    const heavy = minBytes !== undefined && t.bytes >= minBytes;
    const fanOut = minDestinations !== undefined && t.nDst >= minDestinations;
    return heavy && fanOut ? "bytes+fan-out" : heavy ? "bytes" : fanOut ? "fan-out" : null;
  };

  /** A source's alert for one window, or null while it stays under every threshold. */
  const alert: ToResult<SourceTally> = (key, start, t, closed) => {
    const reason = reasonOf(t);
    if (!reason) return null;
    const values: WindowResult["values"] = { bytes: t.bytes, packets: t.packets, reason };
    if (tracksDestinations) values.destinations = t.nDst;
    return { key, windowStartMs: start, windowEndMs: start + windowMs, values, closed };
  };

  const advance = (state: HeavyHittersState, timeMs: number, out: Emit<WindowResult>): HeavyHittersState => {
    advanceTo(state, timeMs, windowMs, allowedLatenessMs, alert, out);
    return state;
  };

  return {
    init: () => ({ maxTimeMs: null, lateRecords: 0, open: {} }),

    process(state, records: readonly FluxRecord[], out) {
      for (const [source, timeMs, bytes, destination] of records) {
        const start = Math.floor(timeMs / windowMs) * windowMs;
        if (state.maxTimeMs !== null && start + windowMs <= state.maxTimeMs - allowedLatenessMs) {
          state.lateRecords += 1;
          continue;
        }
        const bySource = openWindow(state, start);
        const slot = slotOfKey(source);
        let tally = bySource[slot];
        if (tally) keepPreimage(state, bySource, slot);
        else addSlot(bySource, slot, (tally = { bytes: 0, packets: 0, dst: {}, nDst: 0 }));
        tally.bytes += typeof bytes === "number" ? bytes : 0;
        tally.packets += 1;
        if (minDestinations !== undefined && tally.nDst < minDestinations && destination !== undefined) {
          const dst = slotOfKey(String(destination));
          if (!Object.hasOwn(tally.dst, dst)) {
            tally.dst[dst] = 1;
            tally.nDst += 1;
          }
        }
        advance(state, timeMs, out);
      }
      return state;
    },

    tick: advance,

    restore(snapshot) {
      if (!isState(snapshot)) throw new Error("heavy-hitters: malformed checkpoint state");
      return snapshot;
    },

    openResults: (state, filter: ResultFilter) => openWindowResults(state, windowMs, filter, alert),

    lateRecords: (state) => state.lateRecords,

    openEntries: openSlotCount,

    watermarkMs: (state) => (state.maxTimeMs === null ? null : state.maxTimeMs - allowedLatenessMs),

    slicing: keyedWindowSlicing<SourceTally>(isTally),

    moves: keyedWindowMoves<SourceTally>(windowMs, allowedLatenessMs, isTally, alert),
  };
}

const isTally = (t: Record<string, unknown>): boolean =>
  typeof t.bytes === "number" && typeof t.packets === "number" && typeof t.nDst === "number" && typeof t.dst === "object" && t.dst !== null;

function isState(value: unknown): value is HeavyHittersState {
  return isKeyedWindows<SourceTally>(value, isTally);
}

/** The registry entry: `"operator": { "name": "heavy-hitters", "params": { "minBytes": 1e9 } }`. */
export const heavyHitters = defineOperator({
  description: "Per-source heavy-hitter / fan-out (DoS, scan) detector over tumbling event-time windows",
  params: ParamsSchema,
  fields: (p) => [{ name: p.bytesField, type: "number" }, ...(p.destinationField === undefined ? [] : [{ name: p.destinationField, type: "string" as const }])],
  maxWindowMs: (p) => p.windowMs,
  create,
});
