/** Binary search over ascending arrays of numbers (dedup windows, sparse HyperLogLog entries). */
/** The first index whose value is ≥ `value` (the array's length if none). */
export function lowerBound(sorted, value) {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((sorted[mid] ?? 0) < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
