#!/usr/bin/env node
// `npx flux …`: the Flux CLI (bin/cli/main.ts, run through Node's type stripping).
// npm puts node_modules/.bin first on PATH, so `npx flux` runs on the Node 22 that `npm ci`
// installs (the `node` dev dependency) even where Node 20 is the system's.
const [major, minor] = process.versions.node.split(".").map(Number);
if (!(major > 22 || (major === 22 && minor >= 18))) {
  console.error(`flux needs Node 22.18 or newer (this is ${process.version}); run it as \`npx flux\` after \`npm ci\`, which brings Node 22`);
  process.exit(1);
}
await import("./cli/main.ts");
