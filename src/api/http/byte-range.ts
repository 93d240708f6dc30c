/** HTTP Range header parsing (RFC 9110 §14) for a single byte range. */
import { HttpError } from '../errors';

export interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

/**
 * Returns the requested range clamped to the file, or null to send the whole file (no header,
 * a malformed header, or several ranges, all of which a server may answer with 200).
 * Throws 416 when the range starts beyond the end of the file.
 */
export function parseByteRange(header: string | undefined, size: number): ByteRange | null {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null;
  const [, first, last] = match;
  if (first === '' && last === '') return null;
  if (first === '') {
    // Suffix range: the last N bytes.
    const length = Number(last);
    if (length === 0 || size === 0) throw new HttpError(416, 'Range not satisfiable');
    return { start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return null;
  if (start >= size) throw new HttpError(416, `Range not satisfiable: the recording has ${size} bytes`);
  return { start, end };
}
