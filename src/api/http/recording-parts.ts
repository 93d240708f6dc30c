/**
 * A call's recording as one WAV, however many parts it was written in. A call that comes back to
 * the agent after a failed transfer continues on a new media stream, recorded in a file of its own
 * (`<call id>-2.wav`, then -3 …, docs/phone-operations.md): served alone, the first part would
 * hide everything said after the transfer. The parts are joined on the fly — one header with the
 * summed sizes, then each part's audio in order — so the API and the dashboard play the whole
 * call, byte ranges included, and nothing on disk is rewritten.
 *
 * A part's audio runs to the end of its file (a part whose writer crashed has a stale header). A
 * later part that is not a file with the canonical 44-byte header in the first part's format is
 * left out and logged: joined, it would play as noise.
 */
import type fs from 'node:fs';
import { Readable } from 'node:stream';
import { DATA_SIZE_OFFSET, RIFF_SIZE_OFFSET, WAV_HEADER_BYTES } from '../../audio/wav';
import type { Logger } from '../../shared/logger';

interface Piece {
  /** Bytes of the virtual file this piece covers, and where they come from. */
  length: number;
  source: Buffer | { handle: fs.promises.FileHandle; position: number };
}

export interface JoinedRecording {
  size: number;
  modified: Date;
  /** Streams bytes [start, end] (inclusive) of the joined WAV. */
  stream(range?: { start: number; end: number }): Readable;
  close(): Promise<void>;
}

const READ_CHUNK = 64 * 1024;

async function readHeader(handle: fs.promises.FileHandle): Promise<Buffer | null> {
  const header = Buffer.alloc(WAV_HEADER_BYTES);
  const { bytesRead } = await handle.read(header, 0, WAV_HEADER_BYTES, 0);
  if (bytesRead < WAV_HEADER_BYTES) return null;
  const canonical = header.toString('ascii', 0, 4) === 'RIFF' && header.toString('ascii', 8, 16) === 'WAVEfmt ' && header.toString('ascii', 36, 40) === 'data';
  return canonical ? header : null;
}

/** The fmt chunk's fields (format tag, channels, rate, byte rate, block align, bits). */
const formatOf = (header: Buffer) => header.subarray(20, 36);

/**
 * Joins the parts (the first part's handle first). With one part, or a first part that is not a
 * canonical header, the first part is served exactly as stored.
 */
export async function joinRecording(parts: fs.promises.FileHandle[], log: Logger, callId: string): Promise<JoinedRecording> {
  const stats = await Promise.all(parts.map((p) => p.stat()));
  const modified = new Date(Math.max(...stats.map((s) => s.mtimeMs)));
  const first = parts.length > 1 ? await readHeader(parts[0]!) : null;
  let pieces: Piece[];
  if (!first) {
    pieces = [{ length: stats[0]!.size, source: { handle: parts[0]!, position: 0 } }];
  } else {
    const blockAlign = first.readUInt16LE(32) || 1;
    const audio: Piece[] = [];
    for (let i = 0; i < parts.length; i++) {
      const header = i === 0 ? first : stats[i]!.isFile() ? await readHeader(parts[i]!) : null;
      if (!header || !formatOf(header).equals(formatOf(first))) {
        log.warn('recording part left out: not in the format of the first part', { call_id: callId, part: i + 1 });
        continue;
      }
      const bytes = Math.max(0, stats[i]!.size - WAV_HEADER_BYTES);
      audio.push({ length: bytes - (bytes % blockAlign), source: { handle: parts[i]!, position: WAV_HEADER_BYTES } });
    }
    const dataBytes = audio.reduce((n, p) => n + p.length, 0);
    const header = Buffer.from(first);
    header.writeUInt32LE(36 + dataBytes, RIFF_SIZE_OFFSET);
    header.writeUInt32LE(dataBytes, DATA_SIZE_OFFSET);
    pieces = [{ length: WAV_HEADER_BYTES, source: header }, ...audio];
  }
  const size = pieces.reduce((n, p) => n + p.length, 0);
  return {
    size,
    modified,
    stream: (range) => Readable.from(readPieces(pieces, range?.start ?? 0, range?.end ?? size - 1)),
    close: async () => {
      await Promise.all(parts.map((p) => p.close().catch(() => undefined)));
    },
  };
}

async function* readPieces(pieces: Piece[], start: number, end: number): AsyncGenerator<Buffer> {
  let at = 0;
  for (const piece of pieces) {
    const from = Math.max(start, at);
    const to = Math.min(end + 1, at + piece.length);
    if (from < to) {
      if (Buffer.isBuffer(piece.source)) yield piece.source.subarray(from - at, to - at);
      else {
        for (let pos = from; pos < to; ) {
          const chunk = Buffer.alloc(Math.min(READ_CHUNK, to - pos));
          const { bytesRead } = await piece.source.handle.read(chunk, 0, chunk.length, piece.source.position + (pos - at));
          if (bytesRead === 0) throw new Error('recording shrank while it was read');
          yield chunk.subarray(0, bytesRead);
          pos += bytesRead;
        }
      }
    }
    at += piece.length;
    if (at > end) return;
  }
}
