// The simulator runs in Node; its scheduler yields with setImmediate, which the
// Workers types used for the rest of the project do not declare.
declare function setImmediate(callback: () => void): unknown;
declare const process: { argv: string[]; exitCode?: number; stdout: { write(text: string): boolean } };
