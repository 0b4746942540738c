// Comment text (clause 4.2.2.10): a pool of sentences from the spec's grammar, from
// which each comment is a random substring of the required length, as dbgen does.
// The pool is the same for every table, chunk and worker.
import { WORDS } from "./dists.js";
import { Random, chunkSeed } from "./random.js";
import type { StringColumn } from "./strings.js";

/** Bytes of the text pool (dbgen's is 300 MB; 8 MiB keeps SF 0.01 fast and comments varied). */
export const POOL_BYTES = 8 << 20;
const POOL_STREAM = 99;

function nounPhrase(r: Random): string {
  switch (r.pick(WORDS.nounPhrases)) {
    case "N":
      return r.pick(WORDS.nouns);
    case "JN":
      return `${r.pick(WORDS.adjectives)} ${r.pick(WORDS.nouns)}`;
    case "J,JN":
      return `${r.pick(WORDS.adjectives)}, ${r.pick(WORDS.adjectives)} ${r.pick(WORDS.nouns)}`;
    default:
      return `${r.pick(WORDS.adverbs)} ${r.pick(WORDS.adjectives)} ${r.pick(WORDS.nouns)}`;
  }
}

function verbPhrase(r: Random): string {
  switch (r.pick(WORDS.verbPhrases)) {
    case "V":
      return r.pick(WORDS.verbs);
    case "XV":
      return `${r.pick(WORDS.auxiliaries)} ${r.pick(WORDS.verbs)}`;
    case "VD":
      return `${r.pick(WORDS.verbs)} ${r.pick(WORDS.adverbs)}`;
    default:
      return `${r.pick(WORDS.auxiliaries)} ${r.pick(WORDS.verbs)} ${r.pick(WORDS.adverbs)}`;
  }
}

/** One sentence: its phrases separated by spaces, the terminator right after the last word. */
export function sentence(r: Random): string {
  const parts: string[] = [];
  for (const p of r.pick(WORDS.sentences)) {
    if (p === "N") parts.push(nounPhrase(r));
    else if (p === "V") parts.push(verbPhrase(r));
    else if (p === "P") parts.push(`${r.pick(WORDS.prepositions)} the ${nounPhrase(r)}`);
  }
  return parts.join(" ") + r.pick(WORDS.terminators);
}

/** The text pool: sentences separated by one space, `bytes` long. */
export function textPool(bytes = POOL_BYTES): Uint8Array {
  const pool = new Uint8Array(bytes);
  const r = new Random(chunkSeed(POOL_STREAM, 0));
  let at = 0;
  while (at < bytes) {
    const s = sentence(r) + " ";
    for (let i = 0; i < s.length && at < bytes; i++) pool[at++] = s.charCodeAt(i);
  }
  return pool;
}

/** Appends a comment of a random length in [min, max]: a substring of the pool at a random place. */
export function pushComment(out: StringColumn, r: Random, pool: Uint8Array, min: number, max: number): void {
  const n = r.int(min, max);
  out.pushBytes(pool, r.int(0, pool.length - n), n);
}
