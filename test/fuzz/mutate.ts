// Seeded mutations of file bytes for the reader fuzz suite: byte flips, planted
// integers (lengths and offsets gone wrong), truncation and repeated slices.

const INTERESTING = [0, 1, -1, 7, 8, 0x7f, 0x80, 0xff, 0x7fff, 0xffff, 0x7fffffff, -0x80000000, 1 << 20];

/**
 * A copy of `bytes` with one mutation, and what it was.
 *
 * @example
 * const [bad, how] = mutate(fileBytes, seeded(1));
 */
export function mutate(bytes: Uint8Array, rnd: () => number): [Uint8Array, string] {
  const pick = (n: number) => Math.floor(rnd() * n);
  const out = Uint8Array.from(bytes);
  const at = pick(bytes.length);
  switch (pick(5)) {
    case 0: {
      // A few bytes within one 16-byte window: one damaged place per case.
      const k = 1 + pick(4);
      for (let i = 0; i < k; i++) out[Math.min(out.length - 1, at + pick(16))] = pick(256);
      return [out, `${k} random bytes near ${at}`];
    }
    case 1:
      out[at] ^= 1 << pick(8);
      return [out, `bit flip at ${at}`];
    case 2: {
      const v = INTERESTING[pick(INTERESTING.length)];
      const pos = at & ~3;
      if (pos + 4 <= out.length) new DataView(out.buffer).setInt32(pos, v, true);
      return [out, `int32 ${v} at ${pos}`];
    }
    case 3:
      return [out.subarray(0, at), `cut at ${at}`];
    default: {
      const len = 1 + pick(16);
      const slice = bytes.subarray(at, at + len);
      const joined = new Uint8Array(bytes.length + slice.length);
      joined.set(bytes.subarray(0, at));
      joined.set(slice, at);
      joined.set(bytes.subarray(at), at + slice.length);
      return [joined, `${slice.length} bytes repeated at ${at}`];
    }
  }
}

/** A row set as one comparable string: cells normalised, rows sorted. */
export function canonicalRows(rows: unknown[][]): string {
  const cell = (v: unknown): unknown => {
    if (typeof v === "bigint") return Number(v);
    if (v instanceof Date) return v.getTime();
    if (typeof v === "number" && Number.isNaN(v)) return "NaN";
    if (Object.is(v, -0)) return 0;
    return v ?? null;
  };
  return JSON.stringify(rows.map((r) => JSON.stringify(r.map(cell))).sort());
}
