/** Machine-readable error codes shared by the engine, the CLI and the app. */
export type ErrorCode =
  | "BASIN_PLAN" // the pipeline is invalid (unknown column, wrong type), found before anything runs
  | "BASIN_PARSE" // a data file does not parse
  | "BASIN_IO" // a file is missing or unreadable
  | "BASIN_CONFLICT" // a save would overwrite a file that changed on disk since it was opened
  | "BASIN_CAST" // a value cannot be cast
  | "BASIN_SYNTAX" // the pipeline file does not compile
  | "BASIN_PIPELINE" // the pipeline's own code threw while it was evaluated (a typo'd method, a throw, a missing import)
  | "BASIN_CANCELLED"
  | "BASIN_WORKER" // a worker died
  | "BASIN_OOM"
  | "BASIN_FUNCTION" // a user function (bag map, delayed task) threw inside a task
  | "BASIN_SPILL" // spilling to disk failed (disk full, spill limit reached, directory unusable)
  | "BASIN_CUDA" // a GPU operation failed (the message names the GPU and the operation)
  | "BASIN_INTERNAL";

/** Where in the user's pipeline file something was written: "file.ts:12:5". */
export type SourceLocation = string;

/** The serialized form of an error, as it crosses threads and the RPC boundary. */
export interface SerializedError {
  name: string;
  code: ErrorCode;
  message: string;
  location?: SourceLocation;
}

/**
 * Every error Basin raises on purpose: a code, a message that says what to do,
 * and the pipeline source location where one is known.
 *
 * @example
 * throw new BasinError("BASIN_PLAN", 'column "x" does not exist', "taxi.ts:4:12");
 */
export class BasinError extends Error {
  override name = "BasinError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly location?: SourceLocation,
  ) {
    super(location ? `${location}: ${message}` : message);
  }

  /** The message without the location prefix. */
  get detail(): string {
    return this.location ? this.message.slice(this.location.length + 2) : this.message;
  }

  toJSON(): SerializedError {
    return { name: this.name, code: this.code, message: this.detail, location: this.location };
  }

  static fromJSON(e: SerializedError): BasinError {
    return new BasinError(e.code, e.message, e.location);
  }

  /**
   * Something thrown while reading `path`, as a BasinError whose message starts with
   * the file (an engine bug, BASIN_INTERNAL, stays as it is).
   *
   * @example
   * throw BasinError.inFile(e, "trips.arrow");
   */
  static inFile(err: unknown, path: string): BasinError {
    const e = BasinError.from(err);
    return e.code === "BASIN_INTERNAL" || e.detail.startsWith(path)
      ? e
      : new BasinError(e.code, `${path}: ${e.detail}`);
  }

  /** Wraps anything thrown (native errors carry a `code`) as a BasinError. */
  static from(err: unknown, location?: SourceLocation): BasinError {
    if (err instanceof BasinError)
      return err.location || !location ? err : new BasinError(err.code, err.detail, location);
    const e = err as { code?: unknown; message?: unknown };
    const code = typeof e?.code === "string" && e.code.startsWith("BASIN_") ? (e.code as ErrorCode) : "BASIN_INTERNAL";
    return new BasinError(code, typeof e?.message === "string" ? e.message : String(err), location);
  }
}
