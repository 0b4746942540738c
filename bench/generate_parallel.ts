/**
 * A CSV's rows made on every core: chunks of rows made by worker threads and written
 * in order. A chunk's text is a pure function of its row range (`ChunkFn`), so the file
 * is the same byte for byte whatever the number of threads. The function runs in the
 * workers from its source text, so it must use nothing but its arguments.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";

/** Rows [start, end) as CSV text (whole lines); `params` is plain data, cloned to the workers. */
export type ChunkFn<P> = (params: P, start: number, end: number) => string;

const CHUNK_ROWS = 1 << 18;

const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const chunk = (%FN%);
parentPort.on("message", ({ start, end }) => parentPort.postMessage(chunk(workerData, start, end)));
`;

/**
 * The text of `rows` rows in order, made `threads` chunks at a time.
 *
 * @example
 * await writeCsvChunks(path, columns, parallelRows(1e8, groupbyChunk, params));
 */
export async function* parallelRows<P>(
  rows: number,
  fn: ChunkFn<P>,
  params: P,
  threads = availableParallelism(),
): AsyncGenerator<string> {
  const chunks = Math.ceil(rows / CHUNK_ROWS);
  const workers = Array.from(
    { length: Math.max(1, Math.min(threads, chunks)) },
    () => new Worker(WORKER.replace("%FN%", fn.toString()), { eval: true, workerData: params }),
  );
  // Chunk c is made by worker c % n, which takes its next chunk once c has been written.
  const ask = (c: number): Promise<string> => {
    const w = workers[c % workers.length]!;
    const start = c * CHUNK_ROWS;
    return new Promise<string>((resolve, reject) => {
      const done = (text: string) => {
        w.off("error", fail);
        resolve(text);
      };
      const fail = (e: Error) => {
        w.off("message", done);
        reject(e);
      };
      w.once("message", done);
      w.once("error", fail);
      w.postMessage({ start, end: Math.min(rows, start + CHUNK_ROWS) });
    });
  };
  try {
    const pending: Promise<string>[] = []; // chunks asked for and not yet written, in order
    for (let c = 0; c < workers.length; c++) pending.push(ask(c));
    for (let c = 0; c < chunks; c++) {
      const text = await pending.shift()!;
      if (c + workers.length < chunks) pending.push(ask(c + workers.length));
      yield text;
    }
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
