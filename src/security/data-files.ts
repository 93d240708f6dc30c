/**
 * Where the platform's files live under DATA_DIR and who may read them. Everything there is
 * private to the platform's user: directories 0700, files 0600 (recordings, generated secrets,
 * Temporal's database). Recordings are found by call id only, never by a path from a request, a
 * signal or a database field, so no path can lead the API outside the recordings directory.
 */
import fs from 'node:fs';
import path from 'node:path';

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const recordingsDir = (dataDir: string) => path.join(dataDir, 'recordings');

/** Parts of a call's recording served, at most (a part per media stream: more after each failed transfer). */
export const MAX_RECORDING_PARTS = 20;

/**
 * The recording of a call: DATA_DIR/recordings/<call id>.wav, or `<call id>-<part>.wav` for a
 * later part (a stream after a failed transfer), checked to stay inside the directory.
 */
export function recordingFile(dataDir: string, callId: string, part = 1): string {
  if (!UUID.test(callId)) throw new Error('a recording is named by its call id (a UUID)');
  if (!Number.isInteger(part) || part < 1) throw new Error('a recording part is a positive integer');
  const dir = path.resolve(recordingsDir(dataDir));
  const file = path.resolve(dir, `${callId.toLowerCase()}${part > 1 ? `-${part}` : ''}.wav`);
  if (path.dirname(file) !== dir) throw new Error('recording path escapes the recordings directory');
  return file;
}

/**
 * Opens a call's recording for reading; null when there is none. The file itself must not be a
 * symlink, so a link planted in the directory cannot expose another file (the directory may be
 * one: an operator can put recordings on another disk).
 */
export async function openRecording(dataDir: string, callId: string, part = 1): Promise<fs.promises.FileHandle | null> {
  try {
    return await fs.promises.open(recordingFile(dataDir, callId, part), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP' || code === 'EISDIR' || code === 'ENOTDIR') return null;
    throw err;
  }
}

/** Opens every part of a call's recording, first part first; none when the first is missing. */
export async function openRecordingParts(dataDir: string, callId: string): Promise<fs.promises.FileHandle[]> {
  const first = await openRecording(dataDir, callId);
  if (!first) return [];
  const parts = [first];
  try {
    for (let part = 2; part <= MAX_RECORDING_PARTS; part++) {
      const next = await openRecording(dataDir, callId, part);
      if (!next) break;
      parts.push(next);
    }
  } catch (err) {
    await Promise.all(parts.map((p) => p.close().catch(() => undefined)));
    throw err;
  }
  return parts;
}

/** Creates a directory (and its parents) private to this user, and tightens it if it exists. */
export function privateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  fs.chmodSync(dir, DIR_MODE);
}

/** Tightens an existing file to 0600 (files written by older versions were world-readable). */
export function privateFile(file: string): void {
  try {
    fs.chmodSync(file, FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Makes DATA_DIR private at start-up, including what older versions left readable: the
 * directory itself, the recordings directory, secrets.json and Temporal's SQLite files.
 * `traversable`: when the embedded PostgreSQL runs as another user (the platform started as
 * root), DATA_DIR keeps the execute bit for others (0711) so that user can reach its own
 * DATA_DIR/postgres, without being able to list or read anything else.
 */
export function secureDataDir(dataDir: string, options: { traversable?: boolean } = {}): void {
  privateDir(dataDir);
  if (options.traversable) fs.chmodSync(dataDir, 0o711);
  if (fs.existsSync(recordingsDir(dataDir))) privateDir(recordingsDir(dataDir));
  for (const name of ['secrets.json', 'temporal.db', 'temporal.db-wal', 'temporal.db-shm']) privateFile(path.join(dataDir, name));
}
