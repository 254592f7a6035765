// The simulator and the browser tests run in Node; the Workers types used for the rest of
// the project declare neither setImmediate (the simulator's scheduler) nor process.
declare function setImmediate(callback: () => void): unknown;
declare const process: { argv: string[]; exitCode?: number; env: Record<string, string | undefined>; stdout: { write(text: string): boolean } };
