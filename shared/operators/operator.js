/** Binds `operator` to a fresh state, or to the state restored from a checkpoint's `snapshot`. */
export function bindOperator(operator, snapshot) {
    let state = snapshot === undefined ? operator.init() : operator.restore(snapshot);
    return {
        process(records, out) {
            state = operator.process(state, records, out);
        },
        tick(timeMs, out) {
            if (operator.tick)
                state = operator.tick(state, timeMs, out);
        },
        snapshot: () => (operator.snapshot ? operator.snapshot(state) : state),
        openResults: (filter) => operator.openResults?.(state, filter) ?? [],
        lateRecords: () => operator.lateRecords?.(state) ?? 0,
    };
}
