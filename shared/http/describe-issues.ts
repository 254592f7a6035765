/**
 * Turns zod issues into sentences for people (issue 11): each names the field and what
 * was expected ("window.sizeMs: must be an integer, got 1.5"), instead of zod's own text.
 * Messages written in our schemas (refinements, regex hints) are kept as they are.
 */
import type { z } from "zod";

type Issue = z.core.$ZodIssue;

const TYPE_NAMES: Record<string, string> = {
  int: "an integer",
  number: "a number",
  string: "a string",
  boolean: "true or false",
  object: "an object",
  record: "an object",
  array: "an array",
  tuple: "an array",
  null: "null",
};

/** `, got 3`, or ` (missing)`. */
function gotText(value: unknown): string {
  return value === undefined ? " (missing)" : `, got ${shown(value)}`;
}

/** `"a" or "b"`, or `one of "a", "b", "c"`. */
function oneOf(values: readonly unknown[]): string {
  const listed = values.map((v) => JSON.stringify(v));
  return listed.length <= 2 ? listed.join(" or ") : `one of ${listed.join(", ")}`;
}

/** A short rendering of a JSON value for a message. */
export function shown(value: unknown): string {
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "an array";
  if (value !== null && typeof value === "object") return "an object";
  // JSON.stringify shows Infinity (what 1e400 parses to) as null.
  const text = typeof value === "number" ? String(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const step of path) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, step)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[step];
  }
  return value;
}

/** Zod's defaults start like this; our own messages never do. */
const ZOD_DEFAULT = /^(Invalid|Too (small|big)|Unrecognized key|Expected)/;

function expectation(issue: Issue, got: unknown): string {
  switch (issue.code) {
    case "invalid_type":
      // A JSON number beyond ±1.8e308 (1e400) parses to Infinity, which zod calls no number.
      if ((issue.expected === "number" || issue.expected === "int") && typeof got === "number" && !Number.isFinite(got)) return `must be a finite number, got ${String(got)}`;
      return `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}${gotText(got)}`;
    case "too_small":
    case "too_big": {
      const small = issue.code === "too_small";
      const bound = small ? issue.minimum : issue.maximum;
      const inclusive = issue.inclusive !== false;
      const relation = small ? (inclusive ? "at least" : "more than") : inclusive ? "at most" : "less than";
      const one = Number(bound) === 1;
      const unit = issue.origin === "string" ? (one ? " character long" : " characters long") : issue.origin === "array" ? (one ? " entry" : " entries") : "";
      const what = issue.origin === "array" ? "have " : "be ";
      return `must ${what}${relation} ${String(bound)}${unit}${issue.origin === "number" || issue.origin === "int" ? `, got ${shown(got)}` : ""}`;
    }
    case "invalid_value":
      return `must be ${oneOf(issue.values)}${gotText(got)}`;
    case "unrecognized_keys":
      return `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `'${k}'`).join(", ")}`;
    case "invalid_key":
      return `the name ${JSON.stringify(String(issue.path.at(-1)))} is not allowed: ${issue.issues.map((i) => expectation(i, undefined)).join("; ")}`;
    case "invalid_union":
      return unionExpectation(issue, got);
    case "invalid_format":
      return ZOD_DEFAULT.test(issue.message) ? `must match ${issue.pattern ?? issue.format}` : issue.message;
    case "not_multiple_of":
      return `must be a multiple of ${String(issue.divisor)}`;
    default:
      return issue.message;
  }
}

function unionExpectation(issue: Extract<Issue, { code: "invalid_union" }>, got: unknown): string {
  // A discriminated union names the allowed tags (zod sets `options`, not in its issue type).
  const options: unknown = (issue as { options?: unknown }).options;
  if ("discriminator" in issue && Array.isArray(options)) return `must be ${oneOf(options)}${gotText(got)}`;
  const branches = issue.errors;
  // Every branch failed at the value itself: list what each wanted ("a string or an array").
  if (branches.every((b) => b.length === 1 && b[0]?.path.length === 0 && (b[0].code === "invalid_type" || b[0].code === "invalid_value"))) {
    const wanted = branches.map((b) => expectation(b[0] as Issue, got).replace(/^must be /, "").replace(/(, got .*| \(missing\))$/, ""));
    // Several object branches (a filter's forms) want the same thing: say it once.
    return `must be ${[...new Set(wanted)].join(" or ")}${gotText(got)}`;
  }
  // Otherwise the branch that came closest: one whose type fits the value, then the fewest problems.
  const wrongType = (b: readonly Issue[]) => (b.some((i) => i.path.length === 0 && i.code === "invalid_type") ? 1 : 0);
  const closest = [...branches].sort((a, b) => wrongType(a) - wrongType(b) || a.length - b.length)[0];
  if (!closest || closest.length === 0) return "matches none of the allowed forms";
  return `matches none of the allowed forms; the closest: ${describeIssues(closest, got, issue.path).join("; ")}`;
}

/**
 * One sentence per issue, `path: what was expected`, with the offending value taken from
 * `input` (the value that was validated) where it helps; `prefix` is where `input` sits
 * (for the branches of a union). The root is named `root` (`(body)`); an empty `root`
 * leaves it unnamed, for a query string or headers, which are no body.
 */
export function describeIssues(issues: readonly Issue[], input: unknown, prefix: readonly PropertyKey[] = [], root = "(body)"): string[] {
  return issues.map((issue) => {
    const where = [...prefix, ...(issue.code === "invalid_key" ? issue.path.slice(0, -1) : issue.path)];
    const name = where.length > 0 ? where.map(String).join(".") : root;
    return name === "" ? issueText(issue, input) : `${name}: ${issueText(issue, input)}`;
  });
}

/** What one issue expected, without the path: `must be an integer, got 1.5`. `input` is the value validated. */
export function issueText(issue: Issue, input: unknown): string {
  if (issue.code === "custom" || (!ZOD_DEFAULT.test(issue.message) && issue.code !== "invalid_key")) return issue.message;
  return expectation(issue, valueAt(input, issue.path));
}
