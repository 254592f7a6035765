/** Plain-text output helpers: aligned tables and short times. */

/** Left-aligned columns separated by two spaces; the first row is the header. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  ")).join("\n");
}

/** `HH:MM:SS.mmm` of an ISO time (UTC), or `-`. */
export function clock(iso: string | null | undefined): string {
  return iso ? iso.slice(11, 23) : "-";
}

/** `HH:MM:SS` of epoch ms (UTC). */
export function clockMs(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}
