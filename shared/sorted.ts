/** Binary search over ascending arrays: of numbers (dedup windows, sparse HyperLogLog entries) and of strings (window keys). */

/** The first index whose value is ≥ `value` (the array's length if none). */
export function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] ?? 0) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first string in `sorted` greater than `slot` (UTF-16 code unit order, as `sort()`: window keys and slots). */
export function firstAfter(sorted: readonly string[], slot: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as string) <= slot) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
