/** Checkpoint chunking never splits a surrogate pair, and the chunks join back to the text. */
import { describe, expect, it } from "vitest";
import { chunkText } from "../../shared/checkpoint/chunk-text.ts";
import { rng } from "../helpers/rng.ts";

const isLoneSurrogateAt = (s: string, i: number) => {
  const c = s.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff) return !(s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff);
  if (c >= 0xdc00 && c <= 0xdfff) return !(s.charCodeAt(i - 1) >= 0xd800 && s.charCodeAt(i - 1) <= 0xdbff);
  return false;
};

describe("chunkText", () => {
  it("cuts before a pair that would straddle the boundary", () => {
    expect(chunkText("abc😀def", 4)).toEqual(["abc", "😀de", "f"]);
    expect(chunkText("ab😀", 3)).toEqual(["ab", "😀"]);
    expect(chunkText("", 4)).toEqual([]);
  });

  it("keeps every chunk well-formed and within size, and joins back, on random text", () => {
    const r = rng(7);
    const alphabet = ["a", "é", "😀", "𝄞", "\u{10FFFF}", "}"];
    for (let trial = 0; trial < 200; trial++) {
      const text = Array.from({ length: 1 + r.int(60) }, () => alphabet[r.int(alphabet.length)]).join("");
      const size = 2 + r.int(6);
      const chunks = chunkText(text, size);
      expect(chunks.join("")).toBe(text);
      for (const chunk of chunks) {
        expect(chunk.length).toBeGreaterThan(0);
        expect(chunk.length).toBeLessThanOrEqual(size);
        for (let i = 0; i < chunk.length; i++) expect(isLoneSurrogateAt(chunk, i), JSON.stringify(chunk)).toBe(false);
      }
    }
  });
});
