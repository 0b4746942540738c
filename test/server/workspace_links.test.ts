// The workspace is a real boundary: links never lead a read, a save or an export out
// of it, a planted link at a save's temp name is never followed, and the file list
// shows links that stay inside (and leaves out those that lead out).
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Workspace } from "../../engine/server/workspace.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";

const base = makeTempDir("basin-ws-links-");
const root = join(base, "ws");
const outside = join(base, "outside");
mkdirSync(join(root, "sub"), { recursive: true });
mkdirSync(outside);
writeFileSync(join(outside, "secret.txt"), "do not read");
writeFileSync(join(root, "a.ts"), "export default 1;\n");
writeFileSync(join(root, "sub", "b.ts"), "export default 2;\n");
symlinkSync(join(outside, "secret.txt"), join(root, "secret-link.txt"));
symlinkSync(outside, join(root, "out-dir"));
symlinkSync(join(root, "sub", "b.ts"), join(root, "b-link.ts"));
symlinkSync(join(root, "sub"), join(root, "sub-link"));
symlinkSync(join(base, "nowhere"), join(root, "dangling.ts"));
afterAll(() => removeDir(base));

const refused = (f: () => unknown) =>
  expect(f).toThrow(
    expect.objectContaining({ code: "BASIN_IO", message: expect.stringContaining("outside the workspace") }),
  );

describe("workspace boundary", () => {
  const ws = new Workspace(root);

  it("refuses to read, save or export through a link that leads out", () => {
    refused(() => ws.read("secret-link.txt"));
    refused(() => ws.read("out-dir/secret.txt"));
    refused(() => ws.write("out-dir/planted.ts", "x"));
    refused(() => ws.path("out-dir/new/deeper.csv"));
    expect(existsSync(join(outside, "planted.ts"))).toBe(false);
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("do not read");
  });

  it("reads and saves through links that stay inside, and by plain names", () => {
    expect(ws.read("b-link.ts")).toBe("export default 2;\n");
    ws.write("sub-link/c.ts", "export default 3;\n");
    expect(readFileSync(join(root, "sub", "c.ts"), "utf8")).toBe("export default 3;\n");
    ws.write("a.ts", "export default 10;\n");
    expect(readFileSync(join(root, "a.ts"), "utf8")).toBe("export default 10;\n");
  });

  it("never follows a link planted where an old save's temp file used to be", () => {
    symlinkSync(join(outside, "secret.txt"), join(root, "a.ts.basin-save"));
    ws.write("a.ts", "export default 11;\n");
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("do not read");
    expect(readFileSync(join(root, "a.ts"), "utf8")).toBe("export default 11;\n");
    expect(readdirSync(root).filter((f) => f.includes("basin-save-"))).toEqual([]); // no temp file left
  });

  it("lists links that stay inside and leaves out those that lead out or nowhere", () => {
    const { files } = ws.list();
    expect(files).toEqual(expect.arrayContaining(["a.ts", "b-link.ts", "sub/", "sub/b.ts", "sub-link/"]));
    expect(files.filter((f) => /secret|out-dir|dangling/.test(f))).toEqual([]);
  });
});
