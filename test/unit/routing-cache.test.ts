/**
 * The router's per-isolate routing cache (DESIGN.md §4): entries expire after the TTL and
 * stay as a fallback while the coordinator is down, but only for streams that still have
 * dataflows, so an isolate that lives long keeps nothing of deleted ones.
 */
import { describe, expect, it } from "vitest";
import { RoutingCache } from "../../shared/router/routing-cache.ts";
import { record } from "../helpers/fixtures.ts";

describe("RoutingCache", () => {
  const routing = { dataflows: [record("clicks-per-page")], schema: null };

  it("serves an entry until its TTL, and after it only as the fallback", () => {
    const cache = new RoutingCache(1_000);
    cache.set("clicks", routing, 0);
    expect(cache.get("clicks", 999)).toBe(routing);
    expect(cache.get("clicks", 1_000)).toBeUndefined();
    expect(cache.get("clicks", Number.NEGATIVE_INFINITY)).toBe(routing);
  });

  it("drops a stream's entry, fallback included, once a lookup finds no dataflow for it", () => {
    const cache = new RoutingCache(1_000);
    cache.set("clicks", routing, 0);
    cache.set("clicks", { dataflows: [], schema: null }, 5_000);
    expect(cache.get("clicks", 5_000)).toBeUndefined();
    expect(cache.get("clicks", Number.NEGATIVE_INFINITY)).toBeUndefined();
  });
});
