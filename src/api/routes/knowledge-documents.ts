/**
 * A knowledge base's documents (docs/knowledge-base.md): an upload (base64 in JSON) or a URL,
 * each ingested by a Temporal workflow of its own (workflows/knowledge-workflow.ts) whose
 * progress the document shows; a URL can be re-fetched on a schedule (`refresh_hours`).
 */
import { z } from 'zod';
import type { ApiContext } from '../context';
import { HttpError, notFound, unprocessable } from '../errors';
import { route } from '../route';
import { plain, plainAll } from '../../db/database';
import type { KnowledgeDocumentRow } from '../../db/models';
import { kindByName, SUPPORTED_EXTENSIONS } from '../../knowledge/document-kinds';
import { removeRefresh, scheduleRefresh, startIngestion } from '../../knowledge/ingest-control';
import { markFailed } from '../../knowledge/chunk-store';
import { ownedKnowledgeBase } from '../ownership';
import { DOCUMENT_ATTRIBUTES, knowledgeDocumentJson } from '../serializers/knowledge-base';
import { KnowledgeDocumentCreateSchema, KnowledgeDocumentSchema } from '../schemas/knowledge-base';

const TAG = 'Knowledge bases';
const BaseIdParam = z.object({ knowledge_base_id: z.uuid({ message: 'must be a UUID' }) });
const DocumentParams = BaseIdParam.extend({ document_id: z.uuid({ message: 'must be a UUID' }) });

export function knowledgeDocumentRoutes(ctx: ApiContext) {
  const { db, config } = ctx;
  const { KnowledgeBase, KnowledgeDocument } = db.models;
  const owned = ownedKnowledgeBase(db);
  const maxBytes = config.KNOWLEDGE_MAX_DOCUMENT_MB * 1e6;
  const requireBase = async (id: string) => {
    if (!(await KnowledgeBase.findByPk(id, { attributes: ['id'] }))) throw notFound('Knowledge base');
  };
  const findDocument = async (params: { knowledge_base_id: string; document_id: string }): Promise<KnowledgeDocumentRow> => {
    const row = plain(await KnowledgeDocument.findOne({ where: { id: params.document_id, knowledge_base_id: params.knowledge_base_id }, attributes: DOCUMENT_ATTRIBUTES }));
    if (!row) throw notFound('Document');
    return row;
  };
  /** Starts the ingestion; a document whose workflow cannot start says so, and the caller gets the 503. */
  const ingest = async (doc: KnowledgeDocumentRow) => {
    try {
      await startIngestion(ctx, { documentId: doc.id, fetch: doc.source === 'url' });
    } catch (err) {
      await markFailed(db, doc.id, 'the ingestion could not be started; refresh the document to try again');
      throw err;
    }
  };

  return [
    route({
      method: 'get',
      path: '/api/knowledge-bases/{knowledge_base_id}/documents',
      operationId: 'listKnowledgeDocuments',
      tag: TAG,
      access: 'member',
      summary: "List a knowledge base's documents",
      description: 'Newest first, each with its ingestion status and progress.',
      params: BaseIdParam,
      responses: { 200: { description: 'The documents', schema: z.array(KnowledgeDocumentSchema) }, 404: { description: 'No such knowledge base' } },
      async handler({ params }) {
        await requireBase(params.knowledge_base_id);
        const rows = plainAll(await KnowledgeDocument.findAll({ where: { knowledge_base_id: params.knowledge_base_id }, attributes: DOCUMENT_ATTRIBUTES, order: [['created_at', 'DESC'], ['id', 'ASC']] }));
        return { status: 200, body: rows.map(knowledgeDocumentJson) };
      },
    }),
    route({
      method: 'get',
      path: '/api/knowledge-bases/{knowledge_base_id}/documents/{document_id}',
      operationId: 'getKnowledgeDocument',
      tag: TAG,
      access: 'member',
      summary: 'Get one document (its status and progress)',
      params: DocumentParams,
      responses: { 200: { description: 'The document', schema: KnowledgeDocumentSchema }, 404: { description: 'No such knowledge base or document' } },
      async handler({ params }) {
        return { status: 200, body: knowledgeDocumentJson(await findDocument(params)) };
      },
    }),
    route({
      method: 'post',
      path: '/api/knowledge-bases/{knowledge_base_id}/documents',
      operationId: 'addKnowledgeDocument',
      tag: TAG,
      access: 'member',
      summary: 'Add a document: upload a file or give a URL',
      description: [
        `An upload is \`name\` (its extension says the kind: ${SUPPORTED_EXTENSIONS.join(', ')}) and \`content_base64\`; a URL is fetched through the outbound request guard (private and loopback addresses refused unless WEBHOOK_ALLOWED_NETWORKS allows them), its kind from the answer's content type.`,
        `At most KNOWLEDGE_MAX_DOCUMENT_MB (${config.KNOWLEDGE_MAX_DOCUMENT_MB} MB here). Answers 202 with the document \`processing\`: poll it for \`progress\`, then \`ready\` or \`failed\` with its \`error\`.`,
      ].join(' '),
      params: BaseIdParam,
      owned,
      body: KnowledgeDocumentCreateSchema,
      responses: {
        202: { description: 'Accepted: ingestion started', schema: KnowledgeDocumentSchema },
        404: { description: 'No such knowledge base' },
        413: { description: 'The file is larger than KNOWLEDGE_MAX_DOCUMENT_MB' },
        422: { description: 'Neither or both of content_base64 and url, an unsupported kind, or an invalid field' },
      },
      async handler({ params, body, auth }) {
        await requireBase(params.knowledge_base_id);
        if ((body.content_base64 === undefined) === (body.url === undefined)) throw new HttpError(422, 'give either content_base64 (with name) or url');
        const common = { knowledge_base_id: params.knowledge_base_id, status: 'processing' as const, progress: 0, stage: 'queued', owner_id: auth.userId };
        let row: KnowledgeDocumentRow;
        if (body.url !== undefined) {
          row = plain(await KnowledgeDocument.create({ ...common, name: body.name ?? body.url, source: 'url', url: body.url, refresh_hours: body.refresh_hours }));
        } else {
          if (!body.name) throw unprocessable('name', 'is required with content_base64 (its extension says the kind)');
          const kind = kindByName(body.name);
          if (!kind) throw unprocessable('name', `must end in one of ${SUPPORTED_EXTENSIONS.join(', ')}`);
          if (body.refresh_hours !== null) throw unprocessable('refresh_hours', 'only URL documents are refreshed');
          const content = Buffer.from(body.content_base64!, 'base64');
          if (content.length === 0) throw unprocessable('content_base64', 'the file is empty');
          if (content.length > maxBytes) throw new HttpError(413, `the file is ${(content.length / 1e6).toFixed(1)} MB, more than the ${config.KNOWLEDGE_MAX_DOCUMENT_MB} MB allowed`);
          row = plain(await KnowledgeDocument.create({ ...common, name: body.name, source: 'upload', kind, content, size_bytes: content.length }));
        }
        await ingest(row);
        if (row.source === 'url') await scheduleRefresh(ctx, row.id, row.refresh_hours);
        return { status: 202, body: knowledgeDocumentJson(await findDocument({ ...params, document_id: row.id })) };
      },
    }),
    route({
      method: 'post',
      path: '/api/knowledge-bases/{knowledge_base_id}/documents/{document_id}/refresh',
      operationId: 'refreshKnowledgeDocument',
      tag: TAG,
      access: 'member',
      summary: 'Ingest a document again (a URL is fetched again)',
      description: 'Its chunks are replaced in one transaction when the new ingestion is done; until then (and if it fails) searches use the ones indexed before. An ingestion already running is not started twice.',
      params: DocumentParams,
      owned,
      responses: { 202: { description: 'Accepted', schema: KnowledgeDocumentSchema }, 404: { description: 'No such knowledge base or document' } },
      async handler({ params }) {
        const doc = await findDocument(params);
        await KnowledgeDocument.update({ status: 'processing', progress: 0, stage: 'queued', error: null }, { where: { id: doc.id } });
        await ingest(doc);
        return { status: 202, body: knowledgeDocumentJson(await findDocument(params)) };
      },
    }),
    route({
      method: 'delete',
      path: '/api/knowledge-bases/{knowledge_base_id}/documents/{document_id}',
      operationId: 'deleteKnowledgeDocument',
      tag: TAG,
      access: 'member',
      summary: 'Delete a document and its chunks',
      description: 'Its chunks go with it (calls stop finding them at once), and its refresh schedule. An ingestion still running finds it gone and stops.',
      params: DocumentParams,
      owned,
      responses: { 204: { description: 'Deleted' }, 404: { description: 'No such knowledge base or document' } },
      async handler({ params }) {
        const doc = await findDocument(params);
        await KnowledgeDocument.destroy({ where: { id: doc.id } });
        await removeRefresh(ctx.temporal, doc.id);
        return { status: 204 };
      },
    }),
  ];
}
