// A string column built as UTF-8 bytes and offsets (what Arrow and Parquet take),
// without one JS string per value. TPC-H's text is ASCII.

/** A growable column of ASCII strings. */
export class StringColumn {
  chars: Uint8Array;
  offsets: Int32Array;
  length = 0;
  private end = 0;

  constructor(rows: number, avgBytes: number) {
    this.chars = new Uint8Array(Math.max(16, rows * avgBytes));
    this.offsets = new Int32Array(rows + 1);
  }

  private room(n: number): void {
    if (this.end + n <= this.chars.length) return;
    const grown = new Uint8Array(Math.max(this.chars.length * 2, this.end + n));
    grown.set(this.chars.subarray(0, this.end));
    this.chars = grown;
  }

  /** Appends an ASCII text as the next value. */
  push(s: string): void {
    this.room(s.length);
    const c = this.chars;
    let e = this.end;
    for (let i = 0; i < s.length; i++) c[e++] = s.charCodeAt(i);
    this.close(e);
  }

  /** Appends bytes `from[at, at + n)` as the next value. */
  pushBytes(from: Uint8Array, at: number, n: number): void {
    this.room(n);
    const c = this.chars;
    let e = this.end;
    // A loop beats subarray + set for the short values TPC-H has.
    for (let i = 0; i < n; i++) c[e++] = from[at + i];
    this.close(e);
  }

  /** Appends `prefix` followed by `n` zero-padded to `width` digits ("Supplier#000000001"). */
  pushPadded(prefix: string, n: number, width: number): void {
    this.room(prefix.length + Math.max(width, 16));
    const c = this.chars;
    let e = this.end;
    for (let i = 0; i < prefix.length; i++) c[e++] = prefix.charCodeAt(i);
    const digits = String(n);
    for (let i = digits.length; i < width; i++) c[e++] = 48;
    for (let i = 0; i < digits.length; i++) c[e++] = digits.charCodeAt(i);
    this.close(e);
  }

  /** Appends `n` characters drawn uniformly from `alphabet` (ASCII). */
  pushRandom(draw: () => number, alphabet: string, n: number): void {
    this.room(n);
    const c = this.chars;
    let e = this.end;
    for (let i = 0; i < n; i++) c[e++] = alphabet.charCodeAt(Math.floor(draw() * alphabet.length));
    this.close(e);
  }

  private close(e: number): void {
    this.end = e;
    this.offsets[++this.length] = e;
  }

  /** The bytes in use. */
  bytes(): Uint8Array {
    return this.chars.subarray(0, this.end);
  }

  /** The text of value `i` (tests, CSV). */
  at(i: number): string {
    let s = "";
    for (let k = this.offsets[i]; k < this.offsets[i + 1]; k++) s += String.fromCharCode(this.chars[k]);
    return s;
  }
}
