// The folder the workbench edits: a file list and reads/writes confined to it.
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { BasinError } from "../common/errors.js";
import type { OpenedFile, WorkspaceInfo } from "../common/rpc.js";
import { tempBeside } from "../io/write.js";

/** A file's version as saveFile compares it: a hash of its text ("none" when it does not exist). */
function versionOf(text: string | undefined): string {
  return text === undefined ? "none" : createHash("sha256").update(text, "utf8").digest("hex").slice(0, 32);
}

const SKIPPED = new Set(["node_modules", ".git", "dist"]);
/** A workspace listing stops here (a home folder opened by mistake must not hang the app). */
export const MAX_LISTED = 5000;
/** The largest file the editor opens (Monaco slows past this; data files are read by pipelines). */
export const MAX_EDITED_BYTES = 16e6;

/**
 * @example
 * const ws = new Workspace("/home/me/project");
 * ws.write("a.ts", "export default …");
 */
export class Workspace {
  readonly root: string;

  /** The root with its links resolved: every path must really be under it. */
  private readonly realRoot: string;

  constructor(root: string) {
    this.root = resolve(root);
    this.realRoot = realpathSync(this.root);
  }

  list(): WorkspaceInfo {
    const files: string[] = [];
    const walk = (dir: string) => {
      const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
      for (const e of entries) {
        if (files.length >= MAX_LISTED) return;
        if (e.name.startsWith(".") || SKIPPED.has(e.name)) continue;
        const rel = relative(this.root, join(dir, e.name)).split(sep).join("/");
        // A link is listed as what it points to when that is inside; links leading out are left out.
        const kind = e.isSymbolicLink()
          ? this.linkKind(join(dir, e.name))
          : e.isDirectory()
            ? "dir"
            : e.isFile()
              ? "file"
              : undefined;
        if (kind === "dir" && !e.isSymbolicLink()) {
          files.push(`${rel}/`);
          walk(join(dir, e.name));
        } else if (kind === "dir") files.push(`${rel}/`);
        else if (kind === "file") files.push(rel);
      }
    };
    walk(this.root);
    return { root: this.root, files };
  }

  /**
   * The absolute path of a workspace file; refuses anything outside the root, by its
   * name or through a link (the path, or its nearest existing folder, resolved).
   */
  path(rel: string): string {
    if (typeof rel !== "string" || rel === "") throw new BasinError("BASIN_IO", "a workspace file path is needed");
    const p = resolve(this.root, rel);
    const outside = () =>
      new BasinError("BASIN_IO", `${rel} is outside the workspace ${this.root}; open that folder instead`);
    if (!this.inside(p, this.root)) throw outside();
    let existing = p;
    while (!existsSync(existing) && existing !== this.root) existing = dirname(existing);
    if (!this.inside(realpathSync(existing), this.realRoot)) throw outside();
    return p;
  }

  private inside(p: string, root: string): boolean {
    return p === root || p.startsWith(root + sep);
  }

  /** What a link inside the workspace points to, when that is inside too. */
  private linkKind(link: string): "dir" | "file" | undefined {
    try {
      if (!this.inside(realpathSync(link), this.realRoot)) return undefined;
      const s = statSync(link);
      return s.isDirectory() ? "dir" : s.isFile() ? "file" : undefined;
    } catch {
      return undefined; // a dangling link
    }
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

  /**
   * The file's text and version, for the editor: only UTF-8 text of up to
   * MAX_EDITED_BYTES, so that saving it writes back the same bytes (a binary or
   * Latin-1 file decoded as UTF-8 would be saved with U+FFFD in place of its bytes).
   * A byte-order mark stays in the text, and so in the saved file.
   */
  open(rel: string): OpenedFile {
    const p = this.path(rel);
    let bytes: Buffer;
    try {
      const size = statSync(p).size;
      if (size > MAX_EDITED_BYTES)
        throw new BasinError(
          "BASIN_IO",
          `${rel} is ${(size / 1e6).toFixed(0)} MB, too large for the editor (it opens files up to ${MAX_EDITED_BYTES / 1e6} MB); read it in a pipeline instead (readCsv, readParquet, readJson)`,
        );
      bytes = readFileSync(p);
    } catch (e) {
      throw e instanceof BasinError ? e : new BasinError("BASIN_IO", `${rel}: ${(e as Error).message}`);
    }
    let text: string;
    try {
      if (bytes.includes(0)) throw new Error("a NUL byte");
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    } catch {
      throw new BasinError(
        "BASIN_IO",
        `${rel} is not UTF-8 text (a binary, compressed or Latin-1 file?); the editor opens UTF-8 text only, so that saving never changes a file's bytes: read it in a pipeline instead`,
      );
    }
    return { text, version: versionOf(text) };
  }

  /** Writes a new file; BASIN_IO when something is already at that path (nothing is overwritten). */
  create(rel: string, text: string): void {
    if (/[/\\]$/.test(rel))
      throw new BasinError("BASIN_IO", `${rel} names a folder; give a file name, like ${rel}pipeline.ts`);
    if (existsSync(this.path(rel)))
      throw new BasinError("BASIN_IO", `${rel} already exists; open it from the file list, or pick another name`);
    this.write(rel, text);
  }

  /**
   * Writes the file unless it changed on disk since `version` (BASIN_CONFLICT then);
   * returns the new version.
   */
  save(rel: string, text: string, version?: string): { version: string } {
    if (version !== undefined) {
      let onDisk: string | undefined;
      try {
        onDisk = readFileSync(this.path(rel), "utf8");
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw BasinError.from(e);
      }
      if (versionOf(onDisk) !== version)
        throw new BasinError(
          "BASIN_CONFLICT",
          onDisk !== undefined
            ? `${rel} changed on disk since it was opened; saving would overwrite that change (reload it, or save again to overwrite)`
            : `${rel} was deleted on disk since it was opened (save again to write it anew)`,
        );
    }
    this.write(rel, text);
    return { version: versionOf(text) };
  }

  /** Writes through a temp file and a rename: a crash never leaves half a file. */
  write(rel: string, text: string): void {
    const p = this.path(rel);
    try {
      mkdirSync(dirname(p), { recursive: true });
      const tmp = tempBeside(p, "basin-save");
      writeFileSync(tmp, text, { flag: "wx" });
      try {
        renameSync(tmp, p);
      } catch (e) {
        unlinkSync(tmp);
        throw e;
      }
    } catch (e) {
      throw new BasinError("BASIN_IO", `${rel}: cannot save (${(e as Error).message}); check the folder's permissions`);
    }
  }
}
