/**
 * What the client needs from its platform, passed in so the SDK stays pure (STYLE.md §1):
 * HTTP, a clock, timers, randomness and text decoding. `client/runtime.ts` builds one from
 * the globals every target has (Node ≥ 20, browsers, Workers); tests pass fakes.
 */
/** Resolves after `ms`, or earlier when `wake` fires. */
export function sleep(runtime, ms, wake) {
    return new Promise((resolve) => {
        const cancel = runtime.setTimer(() => {
            wake?.remove(done);
            resolve();
        }, Math.max(0, ms));
        const done = () => {
            cancel();
            resolve();
        };
        wake?.add(done);
    });
}
/** Wakes every sleeper registered with it: lets `close()` or new work cut a wait short. */
export class Wake {
    sleepers = new Set();
    add(fn) {
        this.sleepers.add(fn);
    }
    remove(fn) {
        this.sleepers.delete(fn);
    }
    /** Wakes everyone now waiting. */
    fire() {
        const now = [...this.sleepers];
        this.sleepers.clear();
        for (const fn of now)
            fn();
    }
}
