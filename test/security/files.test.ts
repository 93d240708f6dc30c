/**
 * Data files are private to the platform's user (directories 0700, files 0600), recordings are
 * found by call id only, the embedded PostgreSQL gets a generated password kept with the other
 * local secrets, and the Temporal dev server listens on loopback only.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { WavRecorder } from '../../src/gateway/recording/wav-recorder';
import { openRecording, recordingFile, secureDataDir } from '../../src/security/data-files';
import { embeddedPostgresPassword, resolveSecrets } from '../../src/security/local-secrets';
import { getFreePort, startDevServer } from '../../src/temporal/dev-server';
import { loadConfig } from '../../src/config';

const mode = (file: string) => fs.statSync(file).mode & 0o777;
const tmpDataDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'vap-files-'));
const configFor = (dataDir: string, env: Record<string, string> = {}) => loadConfig({ DATA_DIR: dataDir, ...env });

/** Runs `fn` with a permissive umask, so only the modes the code asks for explicitly count. */
async function underUmask<T>(mask: number, fn: () => Promise<T> | T): Promise<T> {
  const previous = process.umask(mask);
  try {
    return await fn();
  } finally {
    process.umask(previous);
  }
}

describe('file modes', () => {
  it('writes recordings 0600 in a 0700 directory, whatever the umask', async () => {
    const dataDir = tmpDataDir();
    const file = recordingFile(dataDir, crypto.randomUUID());
    await underUmask(0, async () => {
      const recorder = await WavRecorder.open({ path: file });
      recorder.writeCaller(new Int16Array(160), 0);
      await recorder.close();
    });
    expect(mode(path.dirname(file))).toBe(0o700);
    expect(mode(file)).toBe(0o600);
  });

  it('writes generated secrets 0600 and keeps the embedded PostgreSQL password with them', async () => {
    const dataDir = tmpDataDir();
    const config = configFor(dataDir);
    const secrets = await underUmask(0, () => resolveSecrets(config));
    const file = path.join(dataDir, 'secrets.json');
    expect(mode(file)).toBe(0o600);
    const password = await underUmask(0, () => embeddedPostgresPassword(config));
    expect(password).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(password).not.toBe('postgres');
    expect(mode(file)).toBe(0o600);
    // Generated once: the next start reads the same values back.
    expect(embeddedPostgresPassword(config)).toBe(password);
    expect(resolveSecrets(config)).toEqual(secrets);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ ...secrets, postgresPassword: password });
  });

  it('never writes secrets given in the environment to disk', () => {
    const dataDir = tmpDataDir();
    const jwt = crypto.randomBytes(24).toString('base64url');
    const config = configFor(dataDir, { JWT_SECRET: jwt });
    resolveSecrets(config);
    const stored = fs.readFileSync(path.join(dataDir, 'secrets.json'), 'utf8');
    expect(stored).not.toContain(jwt);
    expect(JSON.parse(stored)).toHaveProperty('encryptionKey');
  });

  it('tightens what older versions left readable at start-up', () => {
    const dataDir = tmpDataDir();
    fs.chmodSync(dataDir, 0o755);
    fs.mkdirSync(path.join(dataDir, 'recordings'), { mode: 0o755 });
    fs.chmodSync(path.join(dataDir, 'recordings'), 0o755);
    for (const name of ['secrets.json', 'temporal.db', 'temporal.db-wal']) fs.writeFileSync(path.join(dataDir, name), '{}', { mode: 0o644 });
    secureDataDir(dataDir);
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(path.join(dataDir, 'recordings'))).toBe(0o700);
    for (const name of ['secrets.json', 'temporal.db', 'temporal.db-wal']) expect(mode(path.join(dataDir, name))).toBe(0o600);
    // When the embedded PostgreSQL runs as another user (started as root), it may pass through DATA_DIR only.
    secureDataDir(dataDir, { traversable: true });
    expect(mode(dataDir)).toBe(0o711);
  });
});

describe('recordings by call id', () => {
  it('names a recording after its call id only, inside the recordings directory', () => {
    const id = crypto.randomUUID();
    expect(recordingFile('/data', id)).toBe(`/data/recordings/${id}.wav`);
    expect(recordingFile('/data', id, 2)).toBe(`/data/recordings/${id}-2.wav`);
    for (const bad of ['../secrets', '../../etc/passwd', `${id}/../../secrets`, '/etc/passwd', '']) {
      expect(() => recordingFile('/data', bad)).toThrow();
    }
    for (const part of [0, -1, 1.5, Number.NaN]) expect(() => recordingFile('/data', id, part)).toThrow();
  });

  it('does not follow a symlink planted in the recordings directory', async () => {
    const dataDir = tmpDataDir();
    const id = crypto.randomUUID();
    fs.mkdirSync(path.join(dataDir, 'recordings'));
    fs.writeFileSync(path.join(dataDir, 'secrets.json'), '{"jwtSecret":"s"}');
    fs.symlinkSync(path.join(dataDir, 'secrets.json'), path.join(dataDir, 'recordings', `${id}.wav`));
    expect(await openRecording(dataDir, id)).toBeNull();
    // The directory itself may be a link (an operator moving recordings to another disk).
    const elsewhere = tmpDataDir();
    fs.writeFileSync(path.join(elsewhere, `${id}.wav`), 'RIFF');
    fs.rmSync(path.join(dataDir, 'recordings'), { recursive: true });
    fs.symlinkSync(elsewhere, path.join(dataDir, 'recordings'));
    const handle = await openRecording(dataDir, id);
    expect(handle).not.toBeNull();
    await handle!.close();
  });
});

/** Listening TCP sockets of a process: [address, port] from /proc/net/tcp{,6} matched by socket inode. */
function listeningSockets(pid: number): Array<{ address: string; port: number }> {
  const inodes = new Set(
    fs
      .readdirSync(`/proc/${pid}/fd`)
      .map((fd) => {
        try {
          return /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        } catch {
          return undefined;
        }
      })
      .filter(Boolean) as string[],
  );
  const sockets: Array<{ address: string; port: number }> = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || cols[3] !== '0A' || !inodes.has(cols[9]!)) continue; // 0A = LISTEN
      const [hexAddr, hexPort] = cols[1]!.split(':') as [string, string];
      const address =
        hexAddr.length === 8
          ? hexAddr.match(/../g)!.reverse().map((b) => parseInt(b, 16)).join('.')
          : hexAddr === '00000000000000000000000001000000'
            ? '::1'
            : hexAddr === '00000000000000000000000000000000'
              ? '::'
              : hexAddr;
      sockets.push({ address, port: parseInt(hexPort, 16) });
    }
  }
  return sockets;
}

describe("Temporal's own surfaces", () => {
  it('the dev server `npm start` runs listens on loopback only (gRPC, Web UI, HTTP API) and keeps its database private', async () => {
    const dataDir = tmpDataDir();
    const [port, uiPort] = [await getFreePort(), await getFreePort()];
    const dbFile = path.join(dataDir, 'temporal.db');
    // npm start runs under umask 0077 (src/runtime/platform.ts).
    const server = await underUmask(0o077, () => startDevServer({ cliPath: process.env.VAP_TEST_TEMPORAL_CLI!, port, uiPort, dbFile }));
    try {
      const deadline = Date.now() + 20_000;
      let sockets = listeningSockets(server.process.pid!);
      while (!sockets.some((s) => s.port === uiPort) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        sockets = listeningSockets(server.process.pid!);
      }
      expect(sockets.map((s) => s.port)).toEqual(expect.arrayContaining([port, uiPort]));
      for (const socket of sockets) expect(socket).toEqual({ address: '127.0.0.1', port: socket.port });
      expect(mode(dbFile)).toBe(0o600);
      // Its write-ahead log holds the latest state: as private as the database.
      expect(mode(`${dbFile}-wal`)).toBe(0o600);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
