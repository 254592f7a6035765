/**
 * Checks a parsed JSON body before any schema sees it (issue 11): nesting is bounded
 * without recursion (a deep filter once overflowed the stack inside validation), and
 * `__proto__` keys are refused, since object records would drop them silently.
 */

/** How deeply objects and arrays may nest in a request body other than events. */
export const MAX_JSON_DEPTH = 64;

/** Why a body was refused: a sentence, and the path (keys and indexes) where it broke. */
export interface JsonShapeProblem {
  message: string;
  path: (string | number)[];
}

/**
 * Walks `value` iteratively. @returns the first problem: nesting deeper than `maxDepth`
 * levels of objects and arrays, or an object key `__proto__`; null when there is none.
 */
export function checkJsonShape(value: unknown, maxDepth: number = MAX_JSON_DEPTH): JsonShapeProblem | null {
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    if (typeof item.value !== "object" || item.value === null) continue;
    if (item.path.length >= maxDepth) {
      return { message: `the body nests more than ${maxDepth} levels of objects and arrays`, path: item.path };
    }
    if (Array.isArray(item.value)) {
      item.value.forEach((v: unknown, i) => stack.push({ value: v, path: [...item.path, i] }));
      continue;
    }
    for (const [key, v] of Object.entries(item.value)) {
      if (key === "__proto__") return { message: "'__proto__' is not allowed as a key", path: [...item.path, key] };
      stack.push({ value: v, path: [...item.path, key] });
    }
  }
  return null;
}

/** One open object or array while scanning: its keys so far (objects) and where the scan is in it. */
interface Frame {
  keys: Set<string> | null;
  at: string | number;
  expectKey: boolean;
}

/**
 * Scans valid JSON `text` (JSON.parse accepted it) for an object holding a key twice, which
 * JSON.parse would settle silently by keeping the last. Keys are compared decoded, so
 * `"op"` and `"\u006fp"` are the same. @returns the first such key with its path, or null.
 */
export function findDuplicateKey(text: string): JsonShapeProblem | null {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    const top = stack.at(-1);
    if (ch === "{" || ch === "[") stack.push({ keys: ch === "{" ? new Set() : null, at: ch === "{" ? "" : 0, expectKey: ch === "{" });
    else if (ch === "}" || ch === "]") stack.pop();
    else if (ch === "," && top) {
      if (top.keys) top.expectKey = true;
      else top.at = (top.at as number) + 1;
    } else if (ch === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      if (top?.keys && top.expectKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        const path = [...stack.slice(0, -1).map((f) => f.at), key];
        if (top.keys.has(key)) return { message: `the key '${key}' appears twice in one object`, path };
        top.keys.add(key);
        top.at = key;
        top.expectKey = false;
      }
      i = end;
    }
  }
  return null;
}
