/**
 * FLUX_TOKEN_SECRETS (issue 13): comma-separated signing secrets, the first signs and all
 * verify. Rotating: put the new secret first, keep the old one until its tokens expired.
 */
/** Shortest secret accepted, characters: HMAC-SHA-256 wants at least 256 bits of key. */
const MIN_TOKEN_SECRET_LENGTH = 32;
/** Most secrets verified at once (each costs one HMAC per request). */
const MAX_TOKEN_SECRETS = 4;
/**
 * Parses the var.
 * @returns the secrets, or why the value is unusable (unset or empty included), naming no secret.
 */
export function parseTokenSecrets(text) {
    const secrets = (text ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");
    if (secrets.length === 0)
        return { ok: false, problem: "FLUX_TOKEN_SECRETS is not set" };
    if (secrets.length > MAX_TOKEN_SECRETS)
        return { ok: false, problem: `FLUX_TOKEN_SECRETS holds ${secrets.length} secrets; at most ${MAX_TOKEN_SECRETS}` };
    const short = secrets.findIndex((s) => s.length < MIN_TOKEN_SECRET_LENGTH);
    if (short >= 0)
        return { ok: false, problem: `secret ${short + 1} of FLUX_TOKEN_SECRETS is shorter than ${MIN_TOKEN_SECRET_LENGTH} characters` };
    return { ok: true, secrets };
}
