/**
 * The do-not-call list (docs/campaigns.md): numbers no campaign dials. Each user keeps their own,
 * which their campaigns honour; administrators also keep the global list every campaign honours.
 */
import crypto from 'node:crypto';
import { Op } from 'sequelize';
import { z } from 'zod';
import type { ApiContext } from '../context';
import { forbidden, HttpError, notFound, unprocessable } from '../errors';
import { route, uuidParam } from '../route';
import { plain, plainAll } from '../../db/database';
import type { DoNotCallRow } from '../../db/models/campaigns';
import { ContactListError, csvRows, parseContacts } from '../../campaigns/contacts';
import { DncAddSchema, DncEntrySchema, RejectedRowSchema } from '../schemas/campaigns';

const TAG = 'Campaigns';

const entryJson = (r: DoNotCallRow) => ({ id: r.id, phone_number: r.phone_number, owner_id: r.owner_id, note: r.note, created_at: new Date(r.created_at).toISOString() });

export function doNotCallRoutes(ctx: ApiContext) {
  const { DoNotCall } = ctx.db.models;
  return [
    route({
      method: 'get',
      path: '/api/do-not-call',
      operationId: 'listDoNotCall',
      tag: TAG,
      access: 'member',
      summary: 'The do-not-call numbers that apply to your campaigns (yours and the global list)',
      query: z.strictObject({ page: z.coerce.number().int().min(1).default(1), page_size: z.coerce.number().int().min(1).max(1000).default(100) }),
      responses: { 200: { description: 'One page', schema: z.object({ entries: z.array(DncEntrySchema), total: z.number().int() }).meta({ id: 'DoNotCallList' }) } },
      async handler({ auth, query }) {
        const { rows, count } = await DoNotCall.findAndCountAll({
          where: { [Op.or]: [{ owner_id: null }, { owner_id: auth.userId }] },
          order: [['phone_number', 'ASC']],
          limit: query.page_size,
          offset: (query.page - 1) * query.page_size,
        });
        return { status: 200, body: { entries: plainAll(rows).map(entryJson), total: count } };
      },
    }),
    route({
      method: 'post',
      path: '/api/do-not-call',
      operationId: 'addDoNotCall',
      tag: TAG,
      access: 'member',
      summary: 'Add numbers to the do-not-call list (JSON list or CSV)',
      description: 'Numbers are normalised as campaign contacts are; a number already listed is left as it is. Running campaigns skip it from their next dial on.',
      body: DncAddSchema,
      responses: {
        200: { description: 'How many were added, and the rows rejected', schema: z.object({ added: z.number().int(), invalid: z.array(RejectedRowSchema) }).meta({ id: 'DoNotCallAddResult' }) },
        403: { description: '`global` by a member' },
        422: { description: 'Neither phone_numbers nor csv, or malformed CSV' },
      },
      async handler({ auth, body }) {
        if (body.global && auth.role !== 'admin') throw forbidden('Only administrators keep the global do-not-call list');
        if (!body.phone_numbers === (body.csv === undefined)) throw unprocessable('phone_numbers', 'give phone_numbers or csv (one of them)');
        let rows;
        try {
          rows = body.csv !== undefined ? csvRows(body.csv) : body.phone_numbers!.map((p, i) => ({ line: i + 1, row: { phone_number: p } }));
          rows = rows.map(({ line, row }) => ({ line, row: Object.fromEntries(Object.entries(row).filter(([k]) => ['phone_number', 'phone', 'number', 'mobile'].includes(k))) }));
        } catch (err) {
          if (err instanceof ContactListError) throw new HttpError(422, err.message);
          throw err;
        }
        let parsed;
        try {
          parsed = parseContacts(rows, body.default_country);
        } catch (err) {
          if (err instanceof ContactListError) throw new HttpError(422, err.message);
          throw err;
        }
        const ownerId = body.global ? null : auth.userId;
        const before = await DoNotCall.count({ where: { owner_id: ownerId } });
        const now = new Date();
        await DoNotCall.bulkCreate(
          parsed.contacts.map((c) => ({ id: crypto.randomUUID(), owner_id: ownerId, phone_number: c.phone, note: body.note ?? null, created_at: now, updated_at: now })),
          { ignoreDuplicates: true },
        );
        const added = (await DoNotCall.count({ where: { owner_id: ownerId } })) - before;
        return { status: 200, body: { added, invalid: parsed.invalid } };
      },
    }),
    route({
      method: 'delete',
      path: '/api/do-not-call/{entry_id}',
      operationId: 'deleteDoNotCall',
      tag: TAG,
      access: 'member',
      summary: 'Remove a number from the do-not-call list',
      description: 'Your own entries; global ones by administrators only.',
      params: uuidParam('entry_id'),
      responses: { 204: { description: 'Removed' }, 403: { description: 'Not yours' }, 404: { description: 'No such entry' } },
      async handler({ auth, params }) {
        const row = plain(await DoNotCall.findByPk(params.entry_id));
        if (!row) throw notFound('Do-not-call entry');
        if (auth.role !== 'admin' && row.owner_id !== auth.userId) throw forbidden('Only its owner or an administrator may remove this entry');
        await DoNotCall.destroy({ where: { id: row.id } });
        return { status: 204 };
      },
    }),
  ];
}
