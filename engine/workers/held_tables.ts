// Tables that live in a worker process's own store rather than the engine's. The
// scheduler refers to them by negative refs (store handles are positive), so a ref
// says by itself where its table is. A table moves only when another process reads
// it: to the engine's store once (kept there while the ref lives), or into another
// worker process for one task.
import { unlinkSync } from "node:fs";
import { dirname } from "node:path";
import { BasinError } from "../common/errors.js";
import { native, type Handle } from "../native/addon.js";
import type { Ref } from "../scheduler/events.js";
import { exchangeFile } from "./exchange_dir.js";
import type { ProcessQuery } from "./protocol.js";

/** Whether a ref names a table held by a worker process (else it is an engine store handle). */
export function isHeld(ref: Ref): boolean {
  return ref < 0;
}

interface Held {
  /** The process holding it; undefined once that process is gone and only `host` is left. */
  worker?: string;
  handle: Handle;
  /** Its copy in the engine's store, once something outside the worker read it. */
  host?: Promise<Handle>;
  /** That copy has arrived (a copy still on its way dies with its worker). */
  hostReady?: boolean;
}

/** What HeldTables needs from the pool: a request to a worker process, answered with a number. */
export type WorkerRequest = (worker: string, req: Exclude<ProcessQuery, { type: "stats" }>) => Promise<number>;
/** ... and a way to release tables in a worker process. */
export type WorkerRelease = (worker: string, handles: Handle[]) => void;

/** A table as a task on some worker reads it: `transient` tables were moved in for that task only. */
export interface Placed {
  handle: Handle;
  transient: boolean;
}

/**
 * @example
 * const ref = held.hold("gpu-0", 17);    // -1
 * const h = await held.toHost(ref);      // a handle in the engine's store
 */
export class HeldTables {
  private readonly tables = new Map<Ref, Held>();
  /** Copies of the engine's stored (persisted) tables kept in a worker process, by the engine's handle. */
  private readonly stored = new Map<Handle, { worker: string; handle: Promise<Handle> }>();
  private next = 0;
  /** Tables and bytes moved between processes so far (the engine's store ↔ worker processes). */
  readonly moved = { tables: 0, bytes: 0 };

  constructor(
    private readonly request: WorkerRequest,
    private readonly releaseIn: WorkerRelease,
  ) {}

  /** Records a table a worker process made; returns its ref. */
  hold(worker: string, handle: Handle): Ref {
    const ref = -++this.next;
    this.tables.set(ref, { worker, handle });
    return ref;
  }

  /** Number of refs held now (for tests: nothing may be left after a run). */
  get size(): number {
    return this.tables.size;
  }

  /** Number of refs whose only copy `worker` holds (what its loss would take). */
  heldBy(worker: string): number {
    let n = 0;
    for (const t of this.tables.values()) if (t.worker === worker && !t.hostReady) n++;
    return n;
  }

  /** The worker process holding `ref`'s table, if one does. */
  holder(ref: Ref): string | undefined {
    return this.tables.get(ref)?.worker;
  }

  /**
   * The table in the engine's store: the ref itself for a store handle, else a copy
   * made once and kept until the ref is released (the caller must not release it).
   */
  toHost(ref: Ref): Promise<Handle> {
    if (!isHeld(ref)) return Promise.resolve(ref);
    const t = this.get(ref);
    t.host ??= this.fetch(t).then((h) => {
      t.hostReady = true;
      return h;
    });
    return t.host;
  }

  /**
   * Moves a held table into the engine's store for good: the caller owns the handle, the
   * ref is gone. With `keepCopy` (a persisted partition) the worker process keeps its
   * table as the stored copy of the engine's (see placeStored): later runs read it in
   * place there, and a GPU home is made there without moving it in again.
   */
  async take(ref: Ref, keepCopy = false): Promise<Handle> {
    if (!isHeld(ref)) return ref;
    const t = this.get(ref);
    const h = await this.toHost(ref);
    native().retain(h);
    if (this.tables.get(ref) !== t) {
      // Its worker died while the copy arrived (dropWorker let the ref go): only the
      // engine's copy is left, and toHost's own reference to it goes here.
      native().release(h);
      return h;
    }
    if (keepCopy && t.worker && !this.stored.has(h)) {
      this.tables.delete(ref);
      native().release(h); // toHost's own reference; the caller's stays
      this.stored.set(h, { worker: t.worker, handle: Promise.resolve(t.handle) });
    } else this.release(ref);
    return h;
  }

  /**
   * The table where `worker` can read it: a thread reads the engine's store; a process
   * reads its own tables in place, others are moved in for one task (`transient`).
   */
  async place(ref: Ref, worker: string, isProcess: boolean): Promise<Placed> {
    if (!isProcess) return { handle: await this.toHost(ref), transient: false };
    const t = isHeld(ref) ? this.get(ref) : undefined;
    if (t?.worker === worker) return { handle: t.handle, transient: false };
    if (!t || t.host || !t.worker)
      return { handle: await this.moveIn(await this.toHost(ref), worker), transient: true };
    // Straight from the process holding it to the one reading it.
    const from = t.worker;
    const handle = await this.move(
      (path) => this.request(from, { type: "save", handle: t.handle, path }),
      (path) => this.request(worker, { type: "load", path }),
    );
    return { handle, transient: true };
  }

  /** A table of the engine's store into a worker process's; returns its handle there. */
  private moveIn(host: Handle, worker: string): Promise<Handle> {
    return this.move(
      (path) => native().tableSave(host, path),
      (path) => this.request(worker, { type: "load", path }),
    );
  }

  /** Moves a table through an exchange file: `save` writes it (answering its bytes), `load` reads it where it goes. */
  private async move(
    save: (path: string) => Promise<number>,
    load: (path: string) => Promise<Handle>,
  ): Promise<Handle> {
    const path = exchangeFile();
    try {
      return await moving(path, async () => {
        this.count(await save(path));
        return await load(path);
      });
    } finally {
      unlinkQuietly(path);
    }
  }

  /**
   * A stored table of the engine's (a persisted partition) in a worker process. The
   * first worker process to read it keeps a copy while the engine's table lives (see
   * `pruneStored`), so a persisted frame is read in place by later runs there; another
   * worker gets it for one task (`transient`), so no table is kept twice.
   */
  async placeStored(host: Handle, worker: string): Promise<Placed> {
    let copy = this.stored.get(host);
    if (!copy) {
      const handle = this.moveIn(host, worker);
      copy = { worker, handle };
      this.stored.set(host, copy);
      handle.catch(() => this.stored.delete(host));
    }
    if (copy.worker === worker) return { handle: await copy.handle, transient: false };
    return { handle: await this.moveIn(host, worker), transient: true };
  }

  /** The worker process keeping a copy of the engine's stored table `host`, if one does. */
  storedIn(host: Handle): string | undefined {
    return this.stored.get(host)?.worker;
  }

  /** Lets go of the worker copies of stored tables the engine has released (unpersisted). */
  pruneStored(): void {
    for (const [host, c] of this.stored) {
      if (native().tableExists(host)) continue;
      this.stored.delete(host);
      c.handle.then((h) => this.releaseIn(c.worker, [h])).catch(() => {});
    }
  }

  /** Lets a ref go: its engine copy, and its table in the worker process. */
  release(ref: Ref): void {
    const t = this.tables.get(ref);
    if (!t) return;
    this.tables.delete(ref);
    t.host?.then((h) => native().release(h)).catch(() => {});
    if (t.worker) this.releaseIn(t.worker, [t.handle]);
  }

  /**
   * A worker process is gone: returns the refs whose only copy it held (the scheduler
   * recomputes them); refs with an engine copy live on there.
   */
  dropWorker(worker: string): Ref[] {
    for (const [host, c] of this.stored) if (c.worker === worker) this.stored.delete(host);
    const lost: Ref[] = [];
    for (const [ref, t] of this.tables) {
      if (t.worker !== worker) continue;
      if (t.hostReady) t.worker = undefined;
      else {
        this.tables.delete(ref);
        lost.push(ref);
      }
    }
    return lost;
  }

  private count(bytes: number): void {
    this.moved.tables++;
    this.moved.bytes += bytes;
  }

  private get(ref: Ref): Held {
    const t = this.tables.get(ref);
    if (!t)
      throw new BasinError("BASIN_WORKER", `table ${ref} was lost with its worker process before it could be read`);
    return t;
  }

  private fetch(t: Held): Promise<Handle> {
    const from = t.worker;
    if (!from) return Promise.reject(new BasinError("BASIN_WORKER", "a table was lost with its worker process"));
    return this.move(
      (path) => this.request(from, { type: "save", handle: t.handle, path }),
      (path) => native().tableLoad(path),
    );
  }
}

/**
 * Runs a move through `path`; a file that cannot be written or read there (the spill
 * file code's BASIN_SPILL, whose advice is about spill folders) becomes BASIN_IO
 * saying what the file was for and where such files go.
 */
async function moving<T>(path: string, move: () => Promise<T>): Promise<T> {
  try {
    return await move();
  } catch (e) {
    const err = BasinError.from(e);
    if (err.code !== "BASIN_SPILL") throw err;
    const why = err.message.split(`${path}: `)[1]?.split(";")[0] ?? err.message;
    throw new BasinError(
      "BASIN_IO",
      `could not move a table between Basin's worker processes through ${path}: ${why}; free space in ${dirname(path)} (shared memory, else the temp folder), or run without workerProcesses`,
    );
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // never written (the save failed): nothing to remove
  }
}
