// The CLI progress bar: drawn in place on a terminal, whole even when the terminal
// reports no width, silent when output is not a terminal.
import { describe, expect, it } from "vitest";
import { ProgressBar } from "../../engine/cli/progress.js";

function stream(isTTY: boolean, columns?: number): NodeJS.WriteStream & { text: string } {
  const s = {
    isTTY,
    columns,
    text: "",
    write(chunk: string) {
      s.text += chunk;
      return true;
    },
  };
  return s as unknown as NodeJS.WriteStream & { text: string };
}

describe("ProgressBar", () => {
  it("redraws one line with tasks done, the bar and the current group, then clears it", () => {
    const out = stream(true, 0);
    const bar = new ProgressBar(out);
    bar.update({ group: "scan", done: 0, total: 4 });
    bar.update({ group: "merge", done: 0, total: 1 });
    bar.update({ group: "scan", done: 4, total: 4 });
    const last = out.text.split("\r").at(-1)!;
    expect(last).toMatch(/\[█{24}░{6}\] 4\/5 tasks [\d.]+s {2}merge 0\/1$/);
    bar.done();
    expect(out.text.endsWith("\r\x1b[K")).toBe(true);
  });

  it("writes nothing when the output is not a terminal", () => {
    const out = stream(false, 80);
    const bar = new ProgressBar(out);
    bar.update({ group: "scan", done: 1, total: 2 });
    bar.done();
    expect(out.text).toBe("");
  });
});
