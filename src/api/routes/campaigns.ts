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
import { AddContactsSchema, CampaignCreatedSchema, CampaignCreateSchema, CampaignSchema, ContactListQuery, ContactSchema, UploadSchema } from '../schemas/campaigns';

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

  async function upload(campaign: CampaignRow, body: ContactsUpload) {
    const agent = plain(await Agent.findOne({ where: { name: campaign.agent_name }, attributes: ['context_variables'] }));
    const expected = Object.keys((agent?.context_variables as Record<string, unknown> | null) ?? {}).sort();
    try {
      return await storeContacts(db, campaign, body, expected);
    } catch (err) {
      if (err instanceof ContactListError) throw new HttpError(422, err.message);
      throw err;
    }
  }

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
        const campaign = await findCampaign(params.campaign_id);
        if (['completed', 'cancelled'].includes(campaign.status)) throw conflict(`The campaign is ${campaign.status}`);
        const summary = await upload(campaign, body);
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
