/**
 * PostgreSQL's binary array format (array_recv), for a batch's rows sent as one `text[]`
 * parameter (company-rows.ts).
 */

/** TEXTOID: the element type a binary `text[]` names in its header. */
export const TEXT_OID = 25;

/**
 * A one-dimensional `text[]` without NULLs in PostgreSQL's binary format (array_recv): the number
 * of dimensions, a has-NULLs flag, the element type, the dimension's length and lower bound, then
 * each element as its byte length and its bytes. `count` elements of `payload` bytes in all.
 */
export function binaryTextArray(count: number, payload: number) {
  const out = Buffer.allocUnsafe(20 + count * 4 + payload);
  out.writeInt32BE(1, 0);
  out.writeInt32BE(0, 4);
  out.writeInt32BE(TEXT_OID, 8);
  out.writeInt32BE(count, 12);
  out.writeInt32BE(1, 16);
  let at = 20;
  return {
    add(source: Buffer, start: number, end: number): void {
      at = out.writeInt32BE(end - start, at);
      at += source.copy(out, at, start, end);
    },
    /** An element of bytes followed by a string (encoded as UTF-8 in place). */
    addWithText(source: Buffer, start: number, end: number, text: string): void {
      const lengthAt = at;
      at += 4;
      at += source.copy(out, at, start, end);
      const written = out.write(text, at);
      at += written;
      out.writeInt32BE(end - start + written, lengthAt);
    },
    /** A string element, encoded as UTF-8 in place. */
    addText(text: string): void {
      const written = out.write(text, at + 4);
      out.writeInt32BE(written, at);
      at += 4 + written;
    },
    done(): Buffer {
      if (at !== out.length) throw new Error('binaryTextArray: the elements do not fill the array');
      return out;
    },
  };
}
