// NumPy's .npy format (versions 1-3): a small text header, then the elements in
// C order, little-endian.
import { BasinError } from "../common/errors.js";
import type { ArrayDType } from "../common/array_plan.js";

/** Elements with their shape, as .npy files hold them. */
export interface NpyArray {
  data: Float64Array | Float32Array | BigInt64Array | Int32Array | Uint8Array;
  shape: number[];
  dtype: ArrayDType;
}

const DESCR: Record<ArrayDType, string> = { float64: "<f8", float32: "<f4", int64: "<i8", int32: "<i4", bool: "|b1" };
/** Integer element types read as int32. */
const NARROW: Record<
  string,
  Uint8ArrayConstructor | Int8ArrayConstructor | Int16ArrayConstructor | Uint16ArrayConstructor
> = {
  "|u1": Uint8Array,
  "|i1": Int8Array,
  "<i2": Int16Array,
  "<u2": Uint16Array,
};
const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

/**
 * The bytes of a .npy file.
 *
 * @example
 * writeFileSync("r.npy", encodeNpy({ data: new Float64Array([1, 2]), shape: [2], dtype: "float64" }));
 */
export function encodeNpy(a: NpyArray): Uint8Array {
  const shape = a.shape.length === 1 ? `(${a.shape[0]},)` : `(${a.shape.join(", ")})`;
  let header = `{'descr': '${DESCR[a.dtype]}', 'fortran_order': False, 'shape': ${shape}, }`;
  // Magic (6) + version (2) + length (2) + header + "\n", padded to 64 bytes.
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header.padEnd(total - 10 - 1, " ") + "\n";
  const body = new Uint8Array(a.data.buffer, a.data.byteOffset, a.data.byteLength);
  const out = new Uint8Array(total + body.length);
  out.set(MAGIC, 0);
  out[6] = 1;
  out[7] = 0;
  new DataView(out.buffer).setUint16(8, header.length, true);
  for (let i = 0; i < header.length; i++) out[10 + i] = header.charCodeAt(i);
  out.set(body, total);
  return out;
}

/**
 * Reads the bytes of a .npy file (`name` for error messages).
 *
 * @example
 * const { data, shape, dtype } = decodeNpy(readFileSync("x.npy"), "x.npy");
 */
export function decodeNpy(bytes: Uint8Array, name: string): NpyArray {
  const bad = (why: string) => new BasinError("BASIN_PARSE", `${name} is not a .npy file Basin can read: ${why}`);
  if (bytes.length < 10 || MAGIC.some((m, i) => bytes[i] !== m)) throw bad("it does not start with \\x93NUMPY");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const major = bytes[6];
  const hlen = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const start = major === 1 ? 10 : 12;
  const header = new TextDecoder().decode(bytes.subarray(start, start + hlen));
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || !fortran || shapeText === undefined) throw bad(`unreadable header ${header.trim()}`);
  if (fortran === "True") throw bad("it is in Fortran order; save it with np.ascontiguousarray first");
  const shape = shapeText
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map(Number);
  const n = shape.reduce((a, b) => a * b, 1);
  const offset = start + hlen;
  // Narrow integers (an image's uint8) widen to int32, every value kept.
  const narrow = NARROW[descr];
  if (narrow) {
    if (bytes.length - offset < n * narrow.BYTES_PER_ELEMENT)
      throw bad(
        `it holds ${bytes.length - offset} data bytes, shape (${shape.join(", ")}) needs ${n * narrow.BYTES_PER_ELEMENT}`,
      );
    const raw = new Uint8Array(bytes.subarray(offset, offset + n * narrow.BYTES_PER_ELEMENT)).buffer;
    return { data: Int32Array.from(new narrow(raw)), shape, dtype: "int32" };
  }
  const dtype = (Object.keys(DESCR) as ArrayDType[]).find((k) => DESCR[k] === descr);
  if (!dtype)
    throw bad(
      `element type ${descr} is not one of ${[...Object.values(DESCR), ...Object.keys(NARROW)].join(", ")} (little-endian)`,
    );
  const width = { float64: 8, float32: 4, int64: 8, int32: 4, bool: 1 }[dtype];
  if (bytes.length - offset < n * width)
    throw bad(`it holds ${bytes.length - offset} data bytes, shape (${shape.join(", ")}) needs ${n * width}`);
  // Copied: the data must be aligned for its typed array.
  const raw = new Uint8Array(bytes.subarray(offset, offset + n * width)).buffer; // a Buffer's slice() is a view
  const data = {
    float64: () => new Float64Array(raw),
    float32: () => new Float32Array(raw),
    int64: () => new BigInt64Array(raw),
    int32: () => new Int32Array(raw),
    bool: () => new Uint8Array(raw),
  }[dtype]();
  return { data, shape, dtype };
}
