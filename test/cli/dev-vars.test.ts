/**
 * Which addresses the CLI reads `.dev.vars` for (issue 26): loopback ones only, so a
 * deployment's URL never gets the development tokens; and how the file is read.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveConnection } from "../../bin/cli/config.ts";
import { devVarsTokens, isLoopbackUrl } from "../../bin/cli/dev-vars.ts";

describe(".dev.vars in the CLI", () => {
  it("counts localhost, 127.0.0.0/8 and [::1] as loopback, nothing else", () => {
    for (const url of ["http://127.0.0.1:8787", "http://localhost:8787", "http://127.1.2.3", "http://[::1]:8787/"]) expect(isLoopbackUrl(url), url).toBe(true);
    for (const url of ["https://flux.example.workers.dev", "http://10.0.0.1:8787", "http://127.0.0.1.example.com", "http://0.0.0.0:8787", "http://[::ffff:7f00:1]", "not a url"]) {
      expect(isLoopbackUrl(url), url).toBe(false);
    }
  });

  it("reads the tokens as wrangler does (quotes, export, comments) and only as the last resort at a loopback URL", () => {
    const dir = mkdtempSync(join(tmpdir(), "flux-devvars-"));
    writeFileSync(join(dir, ".dev.vars"), "# dev\nexport FLUX_API_TOKEN='dev token'\nFLUX_ADMIN_TOKEN=admin # the admin one\nOTHER=1\n");
    expect(devVarsTokens(dir)).toEqual({ token: "dev token", adminToken: "admin" });
    expect(resolveConnection({ url: "http://127.0.0.1:8787" }, {}, dir)).toEqual({ url: "http://127.0.0.1:8787", token: "dev token", adminToken: "admin" });
    expect(resolveConnection({ url: "http://127.0.0.1:8787", token: "flag" }, { FLUX_ADMIN_TOKEN: "env" }, dir)).toEqual({ url: "http://127.0.0.1:8787", token: "flag", adminToken: "env" });
    expect(resolveConnection({ url: "https://flux.example.workers.dev" }, {}, dir)).toEqual({ url: "https://flux.example.workers.dev" });
    expect(devVarsTokens(join(dir, "nowhere"))).toEqual({});
  });
});
