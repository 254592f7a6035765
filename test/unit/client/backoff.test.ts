/** Pure retry maths and error classification of the client. */
import { describe, expect, it } from "vitest";
import { backoffDelayMs, parseRetryAfter } from "../../../shared/client/backoff.ts";
import { errorFromAnswer } from "../../../shared/client/client-error.ts";
import { utf8Length } from "../../../shared/client/batch-queue.ts";

describe("backoffDelayMs", () => {
  const options = { baseMs: 100, maxMs: 3_000 };

  it("draws uniformly below min(maxMs, baseMs · 2^attempt)", () => {
    expect(backoffDelayMs(0, options, 0)).toBe(0);
    expect(backoffDelayMs(0, options, 0.999)).toBe(99);
    expect(backoffDelayMs(3, options, 0.5)).toBe(400);
    expect(backoffDelayMs(10, options, 0.999)).toBe(2_997);
    expect(backoffDelayMs(5_000, options, 0.5)).toBe(1_500);
  });

  it("never waits less than Retry-After", () => {
    expect(backoffDelayMs(0, options, 0.5, 1_000)).toBe(1_000);
    expect(backoffDelayMs(10, options, 0.9, 1_000)).toBe(2_700);
  });
});

describe("parseRetryAfter", () => {
  it("reads delay-seconds and HTTP dates, and ignores what it cannot read", () => {
    const now = Date.parse("2026-12-01T10:00:00Z");
    expect(parseRetryAfter("1", now)).toBe(1_000);
    expect(parseRetryAfter(" 120 ", now)).toBe(120_000);
    expect(parseRetryAfter("Tue, 01 Dec 2026 10:00:05 GMT", now)).toBe(5_000);
    expect(parseRetryAfter("Tue, 01 Dec 2026 09:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });
});

describe("errorFromAnswer", () => {
  it("keeps the envelope's code, message and details, and says what is retryable", () => {
    const unavailable = errorFromAnswer(503, '{"error":{"code":"UNAVAILABLE","message":"partition 1","details":{"partition":1}}}', 1_000);
    expect(unavailable).toMatchObject({ status: 503, code: "UNAVAILABLE", message: "partition 1", details: { partition: 1 }, retryAfterMs: 1_000, retryable: true });
    expect(errorFromAnswer(503, '{"error":{"code":"NOT_CONFIGURED","message":"no token"}}', null).retryable).toBe(false);
    expect(errorFromAnswer(409, '{"error":{"code":"SEQ_TOO_OLD","message":"old"}}', null).retryable).toBe(false);
    expect(errorFromAnswer(403, '{"error":{"code":"FORBIDDEN","message":"scope"}}', null)).toMatchObject({ code: "FORBIDDEN", retryable: false });
    expect(errorFromAnswer(502, "<html>bad gateway</html>", null)).toMatchObject({ code: "INTERNAL", retryable: true });
  });
});

describe("utf8Length", () => {
  it("matches TextEncoder on ASCII, BMP, astral and lone surrogates", () => {
    for (const text of ["", "abc", "é", "€uro", "😀x", "a\ud800b", "\udc00", "日本語😀😀"]) {
      expect(utf8Length(text), JSON.stringify(text)).toBe(new TextEncoder().encode(text).length);
    }
  });
});
