import { z } from 'zod';
import { UniqueConstraintError } from 'sequelize';
import type { ApiContext } from '../context';
import { conflict, notFound, unprocessable } from '../errors';
import { route, uuidParam } from '../route';
import { plain, plainAll } from '../../db/database';
import type { TelephonyEndpointRow } from '../../db/models';
import { apiTimestamp } from '../../shared/time';
import { EndpointCreateSchema, EndpointSchema, EndpointUpdateSchema } from '../schemas/settings';
import { effectivePublicBaseUrl } from '../../providers/telephony/settings-store';

const EndpointIdParam = uuidParam('endpoint_id');

export function endpointRoutes(ctx: ApiContext) {
  const { db, config } = ctx;
  const { TelephonyEndpoint, TelephonySettings, Agent } = db.models;

  const baseUrl = async () => {
    const stored = await TelephonySettings.findByPk(1, { attributes: ['public_base_url'] });
    return effectivePublicBaseUrl({ public_base_url: (stored?.get('public_base_url') as string | null) ?? null }, config);
  };

  const endpointJson = (row: TelephonyEndpointRow, base: string) => ({
    id: row.id,
    phone_number: row.phone_number,
    provider: row.provider,
    inbound_agent_name: row.inbound_agent_name,
    outbound_agent_name: row.outbound_agent_name,
    label: row.label,
    is_active: row.is_active,
    created_at: apiTimestamp(row.created_at)!,
    updated_at: apiTimestamp(row.updated_at)!,
    inbound_webhook_url: row.inbound_agent_name
      ? `${base}/telephony/${row.provider}/inbound/${encodeURIComponent(row.inbound_agent_name)}`
      : null,
  });

  const requireAgents = async (body: { inbound_agent_name?: string | null; outbound_agent_name?: string | null }) => {
    for (const field of ['inbound_agent_name', 'outbound_agent_name'] as const) {
      const name = body[field];
      if (name && !(await Agent.findOne({ where: { name }, attributes: ['id'] }))) throw unprocessable(field, `no agent named ${name}`);
    }
  };

  const findEndpoint = async (id: string) => {
    const row = plain(await TelephonyEndpoint.findByPk(id));
    if (!row) throw notFound('Endpoint');
    return row;
  };

  const duplicate = (phone: string, provider: string) => conflict(`${phone} is already mapped for provider ${provider}`);

  return [
    route({
      method: 'get',
      path: '/api/settings/endpoints',
      operationId: 'listTelephonyEndpoints',
      tag: 'Settings',
      summary: 'List telephony endpoints (phone number to agent mappings)',
      responses: { 200: { description: 'All endpoints, oldest first', schema: z.array(EndpointSchema) } },
      async handler() {
        const rows = plainAll(await TelephonyEndpoint.findAll({ order: [['created_at', 'ASC'], ['id', 'ASC']] }));
        const base = await baseUrl();
        return { status: 200, body: rows.map((r) => endpointJson(r, base)) };
      },
    }),
    route({
      method: 'post',
      path: '/api/settings/endpoints',
      operationId: 'createTelephonyEndpoint',
      tag: 'Settings',
      summary: 'Map a phone number to agents',
      description:
        'Active on creation. `inbound_webhook_url` is the URL to configure in the provider dashboard for incoming calls; its base is the stored `public_base_url` setting, else the PUBLIC_BASE_URL of the server.',
      body: EndpointCreateSchema,
      responses: {
        201: { description: 'Created', schema: EndpointSchema },
        409: { description: 'The phone number is already mapped for this provider' },
        422: { description: 'Invalid field, or an agent name that does not exist' },
      },
      async handler({ body }) {
        await requireAgents(body);
        if (await TelephonyEndpoint.findOne({ where: { phone_number: body.phone_number, provider: body.provider } })) {
          throw duplicate(body.phone_number, body.provider);
        }
        try {
          const row = await TelephonyEndpoint.create({
            phone_number: body.phone_number,
            provider: body.provider,
            inbound_agent_name: body.inbound_agent_name ?? null,
            outbound_agent_name: body.outbound_agent_name ?? null,
            label: body.label ?? null,
            is_active: true,
          });
          return { status: 201, body: endpointJson(plain(row), await baseUrl()) };
        } catch (err) {
          if (err instanceof UniqueConstraintError) throw duplicate(body.phone_number, body.provider);
          throw err;
        }
      },
    }),
    route({
      method: 'put',
      path: '/api/settings/endpoints/{endpoint_id}',
      operationId: 'updateTelephonyEndpoint',
      tag: 'Settings',
      summary: 'Update an endpoint (agents, label, is_active)',
      description: 'Fields not sent keep their value; null clears an agent or the label. The phone number and provider are fixed.',
      params: EndpointIdParam,
      body: EndpointUpdateSchema,
      responses: {
        200: { description: 'The updated endpoint', schema: EndpointSchema },
        404: { description: 'No such endpoint' },
        422: { description: 'Invalid field, an agent name that does not exist, or a change of phone number or provider' },
      },
      async handler({ params, body }) {
        const current = await findEndpoint(params.endpoint_id as string);
        for (const field of ['phone_number', 'provider'] as const) {
          if (body[field] !== undefined) throw unprocessable(field, 'cannot be changed; delete the endpoint and create a new one');
        }
        await requireAgents(body);
        const changes: Partial<TelephonyEndpointRow> = {};
        if (body.inbound_agent_name !== undefined) changes.inbound_agent_name = body.inbound_agent_name;
        if (body.outbound_agent_name !== undefined) changes.outbound_agent_name = body.outbound_agent_name;
        if (body.label !== undefined) changes.label = body.label;
        if (body.is_active !== undefined) changes.is_active = body.is_active;
        if (Object.keys(changes).length > 0) await TelephonyEndpoint.update(changes, { where: { id: current.id } });
        return { status: 200, body: endpointJson(await findEndpoint(current.id), await baseUrl()) };
      },
    }),
    route({
      method: 'delete',
      path: '/api/settings/endpoints/{endpoint_id}',
      operationId: 'deleteTelephonyEndpoint',
      tag: 'Settings',
      summary: 'Delete an endpoint',
      params: EndpointIdParam,
      responses: { 204: { description: 'Deleted' }, 404: { description: 'No such endpoint' } },
      async handler({ params }) {
        const count = await TelephonyEndpoint.destroy({ where: { id: params.endpoint_id as string } });
        if (!count) throw notFound('Endpoint');
        return { status: 204 };
      },
    }),
  ];
}
