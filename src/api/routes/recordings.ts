import type { ApiContext } from '../context';
import { HttpError, notFound } from '../errors';
import { route, uuidParam } from '../route';
import { parseByteRange } from '../http/byte-range';
import { openRecordingParts } from '../../security/data-files';
import { joinRecording } from '../http/recording-parts';

export function recordingRoutes(ctx: ApiContext) {
  const { db, config, log } = ctx;

  /**
   * Opens the call's recording, DATA_DIR/recordings/<call id>.wav and its later parts
   * (<call id>-2.wav …, after a failed transfer) joined as one WAV; 404 when the call or the file
   * is missing. The call's recording_path is not used: it is only a record of where the gateway
   * wrote, and a path taken from a database field could point anywhere.
   */
  const openCallRecording = async (callId: string) => {
    const call = await db.models.Call.findByPk(callId, { attributes: ['id'] });
    if (!call) throw notFound('Call');
    const parts = await openRecordingParts(config.dataDir, call.get('id') as string);
    if (parts.length === 0) throw notFound('Recording');
    const stat = await parts[0]!.stat();
    if (!stat.isFile()) {
      await Promise.all(parts.map((p) => p.close()));
      throw notFound('Recording');
    }
    return joinRecording(parts, log, callId).catch(async (err: unknown) => {
      await Promise.all(parts.map((p) => p.close().catch(() => undefined)));
      throw err;
    });
  };

  return [
    route({
      method: 'get',
      path: '/api/recordings/{call_id}',
      operationId: 'getRecording',
      tag: 'Calls',
      access: 'member',
      summary: 'Stream the WAV recording of a call',
      description:
        'Streams `audio/wav` from DATA_DIR/recordings/<call_id>.wav (never from another path), joined with its later parts (<call_id>-2.wav …: the call after a failed transfer came back to the agent) as one WAV. Supports a single HTTP byte range (`Range: bytes=start-end`, `bytes=start-`, `bytes=-suffix`) for seeking: 206 with Content-Range; 416 when the range lies beyond the file. Multiple ranges are answered with the whole file.',
      params: uuidParam('call_id'),
      responses: {
        200: { description: 'The whole recording', contentType: 'audio/wav' },
        206: { description: 'The requested byte range', contentType: 'audio/wav' },
        404: { description: 'No such call, or no recording for it' },
        416: { description: 'Range not satisfiable' },
      },
      async handler({ params, req, res }) {
        const callId = params.call_id as string;
        const recording = await openCallRecording(callId);
        const { size, modified } = recording;
        let range: { start: number; end: number } | null;
        try {
          range = parseByteRange(req.headers.range, size);
        } catch (err) {
          await recording.close();
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
          await recording.close();
          res.end();
          return;
        }
        const stream = recording.stream(range ?? undefined);
        const done = () => void recording.close();
        stream.on('error', () => res.destroy());
        stream.on('close', done);
        res.on('close', () => stream.destroy());
        stream.pipe(res);
      },
    }),
  ];
}
