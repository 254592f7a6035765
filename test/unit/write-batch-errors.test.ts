/** What the router answers when a partition cannot confirm a batch: the message names what failed. */
import { describe, expect, it } from "vitest";
import { FluxError } from "../../shared/errors.ts";
import { routeEvents } from "../../shared/ingest/route-events.ts";
import { writeBatch } from "../../shared/router/write-batch.ts";
import type { SendBatch } from "../../shared/router/write-partition.ts";
import { record, spec } from "../helpers/fixtures.ts";

describe("writeBatch errors", () => {
  it("a write whose primary failed because its standby is down says so, and still names the primary", async () => {
    const s = spec({ partitions: 1 });
    const r = record("df", s);
    const primary = r.routes[0]?.primary ?? "";
    const standby = `${primary.slice(0, -1)}1`;
    const send: SendBatch = () => Promise.reject(new Error(`replica ${standby} is down`));
    const batch = { producer: "p", seq: 1 };
    const err = await writeBatch(send, [{ record: r, subBatches: routeEvents(s, [{ page: "a", ts: 1, bytes: 1 }], 0, 256) }], batch, async () => [r]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FluxError);
    const { code, message, details } = err as FluxError;
    expect(code).toBe("UNAVAILABLE");
    expect(message).toContain(`the write to its primary ${primary} did not complete (replica ${standby} is down)`);
    expect(message).toContain("the primary's or its standby's");
    expect(details).toMatchObject({ dataflow: "df", partition: 0, replica: primary, reason: `replica ${standby} is down` });
  });
});
