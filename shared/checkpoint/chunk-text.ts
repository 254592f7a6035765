/**
 * Splits text into chunks of at most `size` UTF-16 code units (`size` ≥ 2), never between
 * the two halves of a surrogate pair: storage keeps text as UTF-8, where a lone half
 * cannot be represented, so a split pair would not survive the round trip.
 */
export function chunkText(text: string, size: number): string[] {
  const chunks: string[] = [];
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + size, text.length);
    const last = text.charCodeAt(end - 1);
    // A high surrogate at the end of a chunk: its low half would start the next one.
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    chunks.push(text.slice(start, end));
    start = end;
  }
  return chunks;
}
