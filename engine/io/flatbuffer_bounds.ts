// apache-arrow decodes IPC metadata with the flatbuffers library, which trusts every
// vector length it reads: one damaged length makes it build millions of objects (a V8
// out-of-memory abort, not an error). Bounding each vector by the bytes that could hold
// it turns that into an exception the readers report as a corrupt file.
import { ByteBuffer } from "flatbuffers";

let bounded = false;

/**
 * Makes every flatbuffer vector longer than its buffer throw (once per process).
 *
 * @example
 * boundFlatbufferVectors();
 * Message.decode(bytes); // a damaged length throws RangeError
 */
export function boundFlatbufferVectors(): void {
  if (bounded) return;
  bounded = true;
  const vectorLength = ByteBuffer.prototype.__vector_len;
  ByteBuffer.prototype.__vector_len = function (this: ByteBuffer, offset: number): number {
    const n = vectorLength.call(this, offset);
    if (n < 0 || n > this.capacity() - offset)
      throw new RangeError(`a metadata vector claims ${n} elements in ${this.capacity()} bytes`);
    return n;
  };
}
