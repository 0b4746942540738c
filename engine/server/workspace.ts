// The folder the workbench edits: a file list and reads/writes confined to it.
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { BasinError } from "../common/errors.js";
import type { WorkspaceInfo } from "../common/rpc.js";

const SKIPPED = new Set(["node_modules", ".git", "dist"]);
/** A workspace listing stops here (a home folder opened by mistake must not hang the app). */
export const MAX_LISTED = 5000;

/**
 * @example
 * const ws = new Workspace("/home/me/project");
 * ws.write("a.ts", "export default …");
 */
export class Workspace {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  list(): WorkspaceInfo {
    const files: string[] = [];
    const walk = (dir: string) => {
      const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
      for (const e of entries) {
        if (files.length >= MAX_LISTED) return;
        if (e.name.startsWith(".") || SKIPPED.has(e.name)) continue;
        const rel = relative(this.root, join(dir, e.name)).split(sep).join("/");
        if (e.isDirectory()) {
          files.push(`${rel}/`);
          walk(join(dir, e.name));
        } else if (e.isFile()) files.push(rel);
      }
    };
    walk(this.root);
    return { root: this.root, files };
  }

  /** The absolute path of a workspace file; refuses anything outside the root. */
  path(rel: string): string {
    if (typeof rel !== "string" || rel === "") throw new BasinError("BASIN_IO", "a workspace file path is needed");
    const p = resolve(this.root, rel);
    if (p !== this.root && !p.startsWith(this.root + sep))
      throw new BasinError("BASIN_IO", `${rel} is outside the workspace ${this.root}; open that folder instead`);
    return p;
  }

  read(rel: string): string {
    try {
      return readFileSync(this.path(rel), "utf8");
    } catch (e) {
      throw BasinError.from(
        e instanceof BasinError ? e : new BasinError("BASIN_IO", `${rel}: ${(e as Error).message}`),
      );
    }
  }

  /** Writes through a temp file and a rename: a crash never leaves half a file. */
  write(rel: string, text: string): void {
    const p = this.path(rel);
    try {
      mkdirSync(dirname(p), { recursive: true });
      const tmp = `${p}.basin-save`;
      writeFileSync(tmp, text);
      renameSync(tmp, p);
    } catch (e) {
      throw new BasinError("BASIN_IO", `${rel}: cannot save (${(e as Error).message}); check the folder's permissions`);
    }
  }
}
