/** Signed tokens (issue 13): round trip, tampering, expiry, rotation, and strict base64url. */
import { describe, expect, it } from "vitest";
import { hmacSha256 } from "../../functions/token-crypto.ts";
import { decodeBase64Url, encodeBase64Url } from "../../shared/tokens/base64url.ts";
import { isSignedToken, signToken, verifyToken } from "../../shared/tokens/signed-token.ts";
import { parseTokenSecrets } from "../../shared/tokens/token-secrets.ts";
import type { TokenClaims } from "../../shared/wire/tokens.ts";

const NEW = "n".repeat(32);
const OLD = "o".repeat(32);
const claims: TokenClaims = { v: 1, scope: "read", dataflows: ["clicks-per-page"], expMs: 10_000 };

describe("base64url", () => {
  it("round-trips every length and byte value", () => {
    for (let n = 0; n < 70; n += 1) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 37 + n) & 255);
      const text = encodeBase64Url(bytes);
      expect(text).toMatch(/^[A-Za-z0-9_-]*$/);
      expect(decodeBase64Url(text)).toEqual(bytes);
    }
  });

  it("matches the platform encoding", () => {
    const bytes = Uint8Array.from([0, 255, 250, 1, 2, 3, 62, 63]);
    const platform = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    expect(encodeBase64Url(bytes)).toBe(platform);
  });

  it("refuses foreign characters, impossible lengths and non-zero leftover bits", () => {
    expect(decodeBase64Url("ab+c")).toBeNull();
    expect(decodeBase64Url("abcde")).toBeNull();
    expect(decodeBase64Url("AA")).toEqual(Uint8Array.from([0]));
    expect(decodeBase64Url("AB")).toBeNull();
  });
});

describe("signed tokens", () => {
  it("verifies what it signed, before expiry only", async () => {
    const token = await signToken(claims, NEW, hmacSha256);
    expect(isSignedToken(token)).toBe(true);
    expect(await verifyToken(token, [NEW], 9_999, hmacSha256)).toEqual({ ok: true, claims });
    expect(await verifyToken(token, [NEW], 10_000, hmacSha256)).toEqual({ ok: false, reason: "expired" });
  });

  it("refuses any changed character of the claims or the signature", async () => {
    const token = await signToken(claims, NEW, hmacSha256);
    for (let i = "flux1.".length; i < token.length; i += 1) {
      if (token[i] === ".") continue;
      const tampered = token.slice(0, i) + (token[i] === "A" ? "B" : "A") + token.slice(i + 1);
      const verdict = await verifyToken(tampered, [NEW], 0, hmacSha256);
      expect(verdict.ok, `changed at ${i}`).toBe(false);
    }
  });

  it("refuses claims re-signed by someone without the secret, and widened claims", async () => {
    const forged = await signToken({ ...claims, expMs: 1e15 }, "x".repeat(32), hmacSha256);
    expect(await verifyToken(forged, [NEW, OLD], 0, hmacSha256)).toEqual({ ok: false, reason: "signature" });
    const token = await signToken(claims, NEW, hmacSha256);
    const [, , signature] = token.split(".");
    const widened = `flux1.${encodeBase64Url(Uint8Array.from(JSON.stringify({ v: 1, scope: "admin", expMs: 1e15 }), (c) => c.charCodeAt(0)))}.${signature}`;
    expect(await verifyToken(widened, [NEW], 0, hmacSha256)).toEqual({ ok: false, reason: "signature" });
  });

  it("accepts tokens of either secret during a rotation, and none of a retired one", async () => {
    const byOld = await signToken(claims, OLD, hmacSha256);
    expect((await verifyToken(byOld, [NEW, OLD], 0, hmacSha256)).ok).toBe(true);
    expect(await verifyToken(byOld, [NEW], 0, hmacSha256)).toEqual({ ok: false, reason: "signature" });
  });

  it.each([["empty", ""], ["two parts", "flux1.abc"], ["another version", "flux2.a.b"], ["bad base64", "flux1.!!.AA"], ["too long", `flux1.${"A".repeat(9000)}.AA`]])(
    "calls a token malformed: %s",
    async (_name, token) => {
      expect(await verifyToken(token, [NEW], 0, hmacSha256)).toEqual({ ok: false, reason: "malformed" });
    },
  );

  it("calls signed claims of the wrong shape malformed", async () => {
    const body = encodeBase64Url(Uint8Array.from('{"v":1,"scope":"read","dataflows":[],"expMs":5}', (c) => c.charCodeAt(0)));
    const signature = encodeBase64Url(await hmacSha256(NEW, `flux1.${body}`));
    expect(await verifyToken(`flux1.${body}.${signature}`, [NEW], 0, hmacSha256)).toEqual({ ok: false, reason: "malformed" });
  });
});

describe("FLUX_TOKEN_SECRETS", () => {
  it("splits on commas, trims, and keeps the order (the first signs)", () => {
    expect(parseTokenSecrets(` ${NEW} ,${OLD},`)).toEqual({ ok: true, secrets: [NEW, OLD] });
  });

  it.each([[undefined], [""], [" , "], ["tiny-secret"], [`${NEW},tiny-secret`], [[NEW, NEW, NEW, NEW, NEW].join(",")]])("refuses %j without naming a secret", (text) => {
    const parsed = parseTokenSecrets(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).not.toContain("tiny-secret");
  });
});
