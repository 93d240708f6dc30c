/**
 * Campaigns (docs/campaigns.md): an extension beside POST /api/calls/outbound, which stays one
 * call per request. Members create campaigns and act on their own; administrators on any.
 */
import { notifyCampaignStatus } from '../../campaigns/campaign-webhooks';
import crypto from 'node:crypto';
import { z } from 'zod';
import type { ApiContext } from '../context';
import { conflict, HttpError, notFound, unprocessable } from '../errors';
import { route, uuidParam } from '../route';
import { plain, plainAll } from '../../db/database';
import type { CampaignRow } from '../../db/models/campaigns';
import { ContactListError } from '../../campaigns/contacts';
import { campaignJson, contactPage, storeContacts, type ContactsUpload } from '../../campaigns/campaign-store';
import { ALLOWED_FROM, signalCampaign, startCampaignWorkflow, transition, type CampaignAction } from '../../campaigns/campaign-control';
import { campaignWorkflowId } from '../../../workflows/campaign-definitions';
import { ownedCampaign } from '../ownership';
import { contactsCsv } from '../../campaigns/contacts-csv';
import { streamContacts, UploadTooLarge } from '../../campaigns/contacts-stream';
import { WRITE_BATCH } from '../../campaigns/contact-writer';
import { AddContactsSchema, ContactsCsvQuery, CampaignCreatedSchema, CampaignCreateSchema, CampaignSchema, ContactListQuery, ContactSchema, UploadSchema } from '../schemas/campaigns';

const TAG = 'Campaigns';
const campaignIdParam = uuidParam('campaign_id');
const EXTENSION = 'An extension to the spec (docs/campaigns.md).';

export function campaignRoutes(ctx: ApiContext) {
  const { db, temporal } = ctx;
  // The change's webhook goes out now; if this fails, the campaign's next step sends it.
  const notify = (campaignId: string) =>
    notifyCampaignStatus({ temporal, db, taskQueue: ctx.config.TEMPORAL_TASK_QUEUE, initialRetrySecs: ctx.config.WEBHOOK_RETRY_INITIAL_SECS }, campaignId).catch((err: Error) =>
      ctx.log.warn('campaign webhook not started; the next step sends it', { campaign_id: campaignId, error: err.message }),
    );
  const { Campaign, Agent } = db.models;
  const owned = ownedCampaign(db);

  const findCampaign = async (id: string): Promise<CampaignRow> => {
    const row = plain(await Campaign.findByPk(id));
    if (!row) throw notFound('Campaign');
    return row;
  };

  /** The agent's context_variables, which the upload reports valid rows lacking (missing_variables). */
  async function expectedVariables(campaign: CampaignRow): Promise<string[]> {
    const agent = plain(await Agent.findOne({ where: { name: campaign.agent_name }, attributes: ['context_variables'] }));
    return Object.keys((agent?.context_variables as Record<string, unknown> | null) ?? {}).sort();
  }

  async function asHttpError<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof ContactListError) throw new HttpError(422, err.message);
      // Answered at once; what is left of the body is read and dropped, then the connection closes.
      if (err instanceof UploadTooLarge) throw new HttpError(413, err.message, { Connection: 'close' });
      throw err;
    }
  }

  async function upload(campaign: CampaignRow, body: ContactsUpload) {
    const expected = await expectedVariables(campaign);
    return asHttpError(() => storeContacts(db, campaign, body, expected));
  }

  const openForContacts = async (id: string) => {
    const campaign = await findCampaign(id);
    if (['completed', 'cancelled'].includes(campaign.status)) throw conflict(`The campaign is ${campaign.status}`);
    return campaign;
  };

  const action = (name: CampaignAction, summary: string, description: string) =>
    route({
      method: 'post',
      path: `/api/campaigns/{campaign_id}/${name}`,
      operationId: `${name}Campaign`,
      tag: TAG,
      access: 'member',
      owned,
      summary,
      description: `${description} Allowed from: ${ALLOWED_FROM[name].join(', ')} (else 409).`,
      params: campaignIdParam,
      responses: { 200: { description: 'The campaign', schema: CampaignSchema }, 404: { description: 'No such campaign' }, 409: { description: 'Not allowed in its status' } },
      async handler({ params }) {
        const campaign = await findCampaign(params.campaign_id);
        if (name === 'start') await startCampaignWorkflow(ctx, campaign.id);
        if (!(await transition(db, campaign, name))) throw conflict(`Cannot ${name} a campaign that is ${(await findCampaign(campaign.id)).status}`);
        await notify(campaign.id);
        await signalCampaign(temporal, campaign.id);
        return { status: 200, body: await campaignJson(db, await findCampaign(campaign.id)) };
      },
    });

  return [
    route({
      method: 'post',
      path: '/api/campaigns',
      operationId: 'createCampaign',
      tag: TAG,
      access: 'member',
      summary: 'Create a campaign: a contact list called by an agent within calling hours',
      description: [
        EXTENSION,
        'Contacts come as JSON rows (`contacts`) or CSV text (`contacts_csv`): a phone column, E.164 or national with `default_country`, normalised with libphonenumber;',
        'an optional `timezone` column (default: the campaign\'s); every other column becomes the call\'s custom_parameters. Bad rows are kept as `invalid` with their line;',
        'a number twice is one contact; numbers on the do-not-call list are `skipped_dnc` and never dialled.',
        'Each attempt is a normal outbound call (as POST /api/calls/outbound) whose `metadata` holds `campaign_id`, `contact_id` and `attempt`.',
        'With `start` (default) the campaign runs (or is `scheduled` until `schedule.start_at`).',
      ].join(' '),
      body: CampaignCreateSchema,
      responses: {
        201: { description: 'The campaign and what the upload held', schema: CampaignCreatedSchema },
        422: { description: 'Invalid field, unknown agent, a contact list without a phone column or with bad column names, or malformed CSV' },
      },
      async handler({ body, auth }) {
        if (!(await Agent.count({ where: { name: body.agent_name } }))) throw unprocessable('agent_name', `agent ${body.agent_name} not found`);
        const id = crypto.randomUUID();
        const row = plain(
          await Campaign.create({
            id,
            name: body.name,
            owner_id: auth.userId,
            agent_name: body.agent_name,
            provider: body.provider ?? null,
            from_number: body.from_number ?? null,
            status: 'draft',
            timezone: body.timezone,
            default_country: body.default_country ?? null,
            schedule: body.schedule,
            pacing: body.pacing,
            retry: body.retry,
            stop_rule: body.stop_rule,
            workflow_id: campaignWorkflowId(id),
          }),
        );
        let summary;
        try {
          summary = await upload(row, body);
        } catch (err) {
          await Campaign.destroy({ where: { id } });
          throw err;
        }
        if (body.start) {
          await startCampaignWorkflow(ctx, id);
          await transition(db, row, 'start');
          await notify(id);
          await signalCampaign(temporal, id);
        }
        return { status: 201, body: { ...(await campaignJson(db, await findCampaign(id))), upload: summary } };
      },
    }),
    route({
      method: 'get',
      path: '/api/campaigns',
      operationId: 'listCampaigns',
      tag: TAG,
      access: 'member',
      summary: 'List campaigns, newest first',
      description: `${EXTENSION} A member sees their own campaigns; an administrator sees all.`,
      responses: { 200: { description: 'Campaigns with their progress', schema: z.object({ campaigns: z.array(CampaignSchema) }).meta({ id: 'CampaignList' }) } },
      async handler({ auth }) {
        const rows = plainAll(await Campaign.findAll({ where: auth.role === 'admin' ? {} : { owner_id: auth.userId }, order: [['created_at', 'DESC']], limit: 500 }));
        return { status: 200, body: { campaigns: await Promise.all(rows.map((r) => campaignJson(db, r))) } };
      },
    }),
    route({
      method: 'get',
      path: '/api/campaigns/{campaign_id}',
      operationId: 'getCampaign',
      tag: TAG,
      access: 'member',
      owned,
      summary: 'One campaign with its progress (contacts by state, attempts, answer rate)',
      description: EXTENSION,
      params: campaignIdParam,
      responses: { 200: { description: 'The campaign', schema: CampaignSchema }, 404: { description: 'No such campaign' } },
      async handler({ params }) {
        return { status: 200, body: await campaignJson(db, await findCampaign(params.campaign_id)) };
      },
    }),
    action('start', 'Start a draft campaign', 'Starts its workflow; the campaign runs, or is `scheduled` until `schedule.start_at`.'),
    action('pause', 'Pause a campaign', 'No new attempt starts; calls in flight end as they would and are counted.'),
    action('resume', 'Resume a paused or stopped campaign', 'Continues where it stopped; the circuit breaker counts failures from now on.'),
    action('cancel', 'Cancel a campaign', 'No new attempt starts; contacts not yet called stay `pending`. Final.'),
    route({
      method: 'post',
      path: '/api/campaigns/{campaign_id}/contacts',
      operationId: 'addCampaignContacts',
      tag: TAG,
      access: 'member',
      owned,
      summary: 'Add contacts to a campaign (also while it runs)',
      description: `${EXTENSION} The same rows as at creation; numbers the campaign has already are merged (counted in duplicates).`,
      params: campaignIdParam,
      body: AddContactsSchema,
      responses: {
        200: { description: 'What the upload held', schema: UploadSchema },
        404: { description: 'No such campaign' },
        409: { description: 'The campaign has ended' },
        422: { description: 'Malformed list' },
      },
      async handler({ params, body }) {
        const campaign = await openForContacts(params.campaign_id);
        const summary = await upload(campaign, body);
        await signalCampaign(temporal, campaign.id);
        return { status: 200, body: summary };
      },
    }),
    route({
      method: 'post',
      path: '/api/campaigns/{campaign_id}/contacts.csv',
      operationId: 'uploadCampaignContactsCsv',
      tag: TAG,
      access: 'member',
      owned,
      summary: 'Add contacts from a CSV body, streamed: lists far larger than the JSON body limit',
      description: [
        `${EXTENSION} The body is the CSV file itself (\`Content-Type: text/csv\`, UTF-8, a header line), read as it arrives and stored ${WRITE_BATCH} rows at a time,`,
        'so a list of 100 000 rows never sits in memory. The rows are read as those of the JSON upload (same columns, normalisation, do-not-call, duplicates and line numbers);',
        '`default_country` comes in the query. All or nothing: a malformed line (422, naming it) or a body over the limit (413) stores none of the rows.',
        'Limits: `CAMPAIGN_UPLOAD_MAX_MB` (default 50) and `CAMPAIGN_UPLOAD_MAX_ROWS` (default 200 000).',
        'To start a campaign with such a list: create it with `start: false` and no contacts, upload, then `POST …/start`.',
      ].join(' '),
      params: campaignIdParam,
      query: ContactsCsvQuery,
      rawBody: { contentType: 'text/csv', description: 'The contact list as CSV: a header line naming the columns, then one row per contact' },
      responses: {
        200: { description: 'What the upload held', schema: UploadSchema },
        404: { description: 'No such campaign' },
        409: { description: 'The campaign has ended' },
        413: { description: 'Over CAMPAIGN_UPLOAD_MAX_MB or CAMPAIGN_UPLOAD_MAX_ROWS; nothing stored' },
        415: { description: 'The body is not text/csv' },
        422: { description: 'No phone column, a bad column name, a bad default_country, or malformed CSV (`detail` names the line); nothing stored' },
      },
      async handler({ params, query, req }) {
        if (!req.is('text/csv')) throw new HttpError(415, `Content-Type must be text/csv (got ${req.headers['content-type'] ?? 'none'}); JSON rows go to POST /api/campaigns/{campaign_id}/contacts`);
        // The parser reads UTF-8: another declared charset would come out garbled, not refused.
        const charset = /;\s*charset="?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
        if (charset && !['utf-8', 'utf8', 'us-ascii'].includes(charset)) throw new HttpError(415, `The CSV must be UTF-8 (got charset=${charset})`);
        const campaign = await openForContacts(params.campaign_id);
        const limits = { maxBytes: Math.floor(ctx.config.CAMPAIGN_UPLOAD_MAX_MB * 1e6), maxRows: ctx.config.CAMPAIGN_UPLOAD_MAX_ROWS };
        // A declared length over the limit is refused before a byte is read.
        if (Number(req.headers['content-length'] ?? 0) > limits.maxBytes) throw new HttpError(413, `The CSV body is larger than the limit of ${limits.maxBytes} bytes`, { Connection: 'close' });
        const options = { defaultCountry: query.default_country ?? campaign.default_country, expectedVariables: await expectedVariables(campaign), limits };
        const summary = await asHttpError(() => streamContacts(db, campaign, req, options));
        await signalCampaign(temporal, campaign.id);
        return { status: 200, body: summary };
      },
    }),
    route({
      method: 'get',
      path: '/api/campaigns/{campaign_id}/contacts',
      operationId: 'listCampaignContacts',
      tag: TAG,
      access: 'member',
      owned,
      summary: "A campaign's contacts with their state and each attempt's call",
      description: `${EXTENSION} Paginated (\`page\` from 1, \`page_size\` default 50, max 500) in upload order; \`state\` filters.`,
      params: campaignIdParam,
      query: ContactListQuery,
      responses: {
        200: { description: 'One page of contacts', schema: z.object({ contacts: z.array(ContactSchema), total: z.number().int() }).meta({ id: 'ContactList' }) },
        404: { description: 'No such campaign' },
      },
      async handler({ params, query }) {
        await findCampaign(params.campaign_id);
        return { status: 200, body: await contactPage(db, params.campaign_id, query) };
      },
    }),
    route({
      method: 'get',
      path: '/api/campaigns/{campaign_id}/contacts.csv',
      operationId: 'exportCampaignContacts',
      tag: TAG,
      access: 'member',
      owned,
      summary: "A campaign's results as CSV: every contact, its state, outcome and calls",
      description: `${EXTENSION} One row per contact in upload order, streamed: phone_number, state, attempts, last_outcome, last_call_id, call_ids (space-separated, one per attempt), timezone, line, error, then the list's own columns.`,
      params: campaignIdParam,
      responses: { 200: { description: 'The contacts as CSV (UTF-8, a header row)', contentType: 'text/csv' }, 404: { description: 'No such campaign' } },
      async handler({ params, res }) {
        const campaign = await findCampaign(params.campaign_id);
        const csv = contactsCsv(db, campaign.id);
        // The first piece before the headers go out: a failing query is still answered with a {detail}.
        const first = await csv.next();
        res.status(200).set({ 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': `attachment; filename="campaign-${campaign.id}.csv"` });
        if (!first.done) res.write(first.value);
        for await (const piece of csv) res.write(piece);
        res.end();
      },
    }),
  ];
}
