// The few Node APIs the browser tests use to run a local stack (the project has no Node
// types: everything else runs in workerd or is platform-free).
declare module "node:child_process" {
  interface ChildProcess {
    readonly exitCode: number | null;
    kill(signal?: string): boolean;
    on(event: "exit", listener: (code: number | null) => void): this;
    stdout: { on(event: "data", listener: (chunk: { toString(): string }) => void): void } | null;
    stderr: { on(event: "data", listener: (chunk: { toString(): string }) => void): void } | null;
  }
  export function spawn(command: string, args: readonly string[], options: { env?: Record<string, string | undefined>; stdio?: unknown; detached?: boolean }): ChildProcess;
}
declare module "node:fs" {
  export function mkdtempSync(prefix: string): string;
  export function rmSync(path: string, options: { recursive: boolean; force: boolean }): void;
}
declare module "node:os" {
  export function tmpdir(): string;
}
declare module "node:net" {
  interface Server {
    listen(port: number, host: string, callback: () => void): void;
    address(): { port: number } | string | null;
    close(callback: () => void): void;
  }
  export function createServer(): Server;
}
