/** The long-lived token check (functions/token-crypto.ts): equality exactly, whatever the lengths. */
import { describe, expect, it } from "vitest";
import { matchToken } from "../../functions/token-crypto.ts";

describe("matchToken", () => {
  const configured = ["admin-token-0123456789", "api-token-abcdef"];

  it("names the configured token the offered one equals", () => {
    expect(matchToken("admin-token-0123456789", configured)).toBe(0);
    expect(matchToken("api-token-abcdef", configured)).toBe(1);
  });

  it.each([
    ["a prefix", "api-token-abc"],
    ["a longer token starting with it", "api-token-abcdefX"],
    ["the token twice (each character matches the cycled token)", "api-token-abcdefapi-token-abcdef"],
    ["one character changed", "api-token-abcdeg"],
    ["another case", "API-TOKEN-ABCDEF"],
    ["one character", "a"],
    ["nothing", ""],
  ])("refuses %s", (_name, offered) => {
    expect(matchToken(offered, configured)).toBe(-1);
  });

  it("never matches a token that is not configured (empty)", () => {
    expect(matchToken("", ["", ""])).toBe(-1);
    expect(matchToken("x", ["", "x"])).toBe(1);
  });

  it("names the first when both are the same", () => {
    expect(matchToken("same", ["same", "same"])).toBe(0);
  });

  it("compares UTF-16 code units, as string equality does", () => {
    expect(matchToken("tök€n", ["tök€n"])).toBe(0);
    expect(matchToken("tok€n", ["tök€n"])).toBe(-1);
  });
});
