import fs from 'node:fs';
import path from 'node:path';
import type { ApiContext } from '../context';
import { HttpError, notFound } from '../errors';
import { route, uuidParam } from '../route';
import { plain } from '../../db/database';
import { parseByteRange } from '../http/byte-range';

export function recordingRoutes(ctx: ApiContext) {
  const { db, config } = ctx;

  /** Opens the call's recording; 404 when the call, its recording path or the file is missing. */
  const openRecording = async (callId: string) => {
    const call = plain(await db.models.Call.findByPk(callId, { attributes: ['id', 'recording_path'] }));
    if (!call) throw notFound('Call');
    if (!call.recording_path) throw notFound('Recording');
    const file = path.isAbsolute(call.recording_path) ? call.recording_path : path.resolve(config.dataDir, call.recording_path);
    try {
      const handle = await fs.promises.open(file, 'r');
      const stat = await handle.stat();
      if (!stat.isFile()) {
        await handle.close();
        throw notFound('Recording');
      }
      return { handle, size: stat.size, modified: stat.mtime };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'EISDIR') throw notFound('Recording');
      throw err;
    }
  };

  return [
    route({
      method: 'get',
      path: '/api/recordings/{call_id}',
      tag: 'Calls',
      summary: 'Stream the WAV recording of a call',
      description:
        'Streams `audio/wav`. Supports a single HTTP byte range (`Range: bytes=start-end`, `bytes=start-`, `bytes=-suffix`) for seeking: 206 with Content-Range; 416 when the range lies beyond the file. Multiple ranges are answered with the whole file.',
      params: uuidParam('call_id'),
      responses: {
        200: { description: 'The whole recording', contentType: 'audio/wav' },
        206: { description: 'The requested byte range', contentType: 'audio/wav' },
        404: { description: 'No such call, or no recording for it' },
        416: { description: 'Range not satisfiable' },
      },
      async handler({ params, req, res }) {
        const callId = params.call_id as string;
        const { handle, size, modified } = await openRecording(callId);
        let range: { start: number; end: number } | null;
        try {
          range = parseByteRange(req.headers.range, size);
        } catch (err) {
          await handle.close();
          throw err instanceof HttpError ? new HttpError(err.status, err.detail, { 'Content-Range': `bytes */${size}` }) : err;
        }
        res.set({
          'Content-Type': 'audio/wav',
          'Accept-Ranges': 'bytes',
          'Content-Disposition': `inline; filename="${callId}.wav"`,
          'Last-Modified': modified.toUTCString(),
        });
        if (range) {
          res.status(206).set({ 'Content-Range': `bytes ${range.start}-${range.end}/${size}`, 'Content-Length': String(range.end - range.start + 1) });
        } else {
          res.status(200).set('Content-Length', String(size));
        }
        if (req.method === 'HEAD' || size === 0) {
          await handle.close();
          res.end();
          return;
        }
        const stream = handle.createReadStream(range ?? {});
        stream.on('error', () => res.destroy());
        res.on('close', () => stream.destroy());
        stream.pipe(res);
      },
    }),
  ];
}
