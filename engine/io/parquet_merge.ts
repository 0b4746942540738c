// One Parquet file from parts encoded apart (by the workers, engine/io/write.ts
// writeParquetParts): each part's row groups were placed in the file at some offset;
// their footers become one, the row groups in part order with every file offset
// shifted to where its part landed.
import { BasinError } from "../common/errors.js";
import { decodeStruct, encodeStruct, fieldBig, fieldStructs, T, type TStruct, type TValue } from "./thrift.js";

/** Shifts an i64 field of `s` by `by`, when present. */
function shift(s: TStruct, id: number, by: bigint): void {
  const v = fieldBig(s, id);
  if (v !== undefined) s.set(id, { type: T.I64, v: v + by });
}

/**
 * The merged FileMetaData (Thrift) of parts whose footers are `parts[i].trailer`,
 * each part's bytes after its leading "PAR1" placed at `parts[i].start` in the file.
 *
 * @example
 * const footer = mergeParquetFooters(native().sinkTrailers(sink));
 */
export function mergeParquetFooters(parts: { start: number; trailer: Uint8Array }[]): Uint8Array {
  if (parts.length === 0) throw new BasinError("BASIN_INTERNAL", "a Parquet file of no parts");
  const metas = parts.map((p) => decodeStruct(p.trailer));
  const groups: TValue[] = [];
  let rows = 0n;
  metas.forEach((m, i) => {
    // In its own file the part's bytes began after "PAR1", at offset 4.
    const by = BigInt(parts[i].start - 4);
    rows += fieldBig(m, 3) ?? 0n;
    for (const g of fieldStructs(m, 4)) {
      shift(g, 5, by);
      for (const c of fieldStructs(g, 1)) {
        shift(c, 2, by);
        shift(c, 4, by); // offset index
        shift(c, 6, by); // column index
        const meta = c.get(3);
        if (meta?.type === T.STRUCT) for (const id of [9, 10, 11]) shift(meta.v, id, by);
      }
      groups.push({ type: T.STRUCT, v: g });
    }
  });
  const out: TStruct = new Map(metas[0]);
  out.set(3, { type: T.I64, v: rows });
  out.set(4, { type: T.LIST, elem: T.STRUCT, v: groups });
  return encodeStruct(out);
}
