// Catching BasinErrors in tests, and where a test file's own calls should be reported.
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { BasinError, type ErrorCode } from "../../engine/api/index.js";

/** The BasinError `fn` throws (of `code` when given); fails the test if it throws none. */
export function thrown(fn: () => unknown, code?: ErrorCode): BasinError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(BasinError);
    if (code) expect((e as BasinError).code).toBe(code);
    return e as BasinError;
  }
  throw new Error("expected an error, got none");
}

/** The BasinError `p` rejects with; fails the test if it resolves. */
export async function rejected(p: Promise<unknown>, code?: ErrorCode): Promise<BasinError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(BasinError);
    if (code) expect((e as BasinError).code).toBe(code);
    return e as BasinError;
  }
  throw new Error("expected a rejection, got a result");
}

/**
 * For a test file (pass its `import.meta.url`): `loc(tag, needle)` is the location
 * callerLocation() should report for the call `needle` on the one line tagged
 * `// @<tag>`, as "test/…/file.test.ts:LINE:COL" relative to the cwd.
 *
 * @example
 * const loc = sourceLocator(import.meta.url);
 * expect(e.location).toBe(loc("bad", "col("));
 */
export function sourceLocator(fileUrl: string): (tag: string, needle: string) => string {
  const file = fileURLToPath(fileUrl);
  const source = readFileSync(file, "utf8").split("\n");
  return (tag, needle) => {
    const lines = source
      .map((l, i) => [l, i] as const)
      .filter(([l]) => l.includes(`// @${tag}`) && !l.includes("loc("));
    if (lines.length !== 1) throw new Error(`tag @${tag} must tag exactly one line`);
    const [text, i] = lines[0];
    const column = text.indexOf(needle);
    if (column < 0) throw new Error(`"${needle}" is not on the line tagged @${tag}`);
    return `${relative(process.cwd(), file)}:${i + 1}:${column + 1}`;
  };
}
