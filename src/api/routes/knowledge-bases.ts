/**
 * Knowledge bases (docs/knowledge-base.md): CRUD and the search tester. Documents are
 * knowledge-documents.ts. Whoever creates a base owns it: members may change, delete and add
 * documents to their own only, and may search and use any base in their agents (as tools).
 */
import { z } from 'zod';
import { UniqueConstraintError } from 'sequelize';
import type { ApiContext } from '../context';
import { conflict, notFound, unprocessable } from '../errors';
import { route, uuidParam } from '../route';
import { plain, plainAll } from '../../db/database';
import type { KnowledgeBaseRow } from '../../db/models';
import { resolveTextSearchConfig } from '../../knowledge/languages';
import { removeKnowledgeReferences } from '../../knowledge/references';
import { createKnowledgeRetriever } from '../../knowledge/retrieval';
import { embedderFromConfig } from '../../providers/embeddings';
import { removeRefresh } from '../../knowledge/ingest-control';
import { recordAgentVersion } from '../../agent-tests/versions';
import { ownedKnowledgeBase } from '../ownership';
import { knowledgeBasesJson } from '../serializers/knowledge-base';
import { KnowledgeBaseCreateSchema, KnowledgeBasePatchSchema, KnowledgeBaseSchema, KnowledgeSearchResultSchema, KnowledgeSearchSchema } from '../schemas/knowledge-base';

const BaseIdParam = uuidParam('knowledge_base_id');
const TAG = 'Knowledge bases';

export function knowledgeBaseRoutes(ctx: ApiContext) {
  const { db } = ctx;
  const { KnowledgeBase, KnowledgeDocument } = db.models;
  const owned = ownedKnowledgeBase(db);
  const retriever = createKnowledgeRetriever(db, embedderFromConfig(ctx.config), ctx.log);
  const findBase = async (id: string): Promise<KnowledgeBaseRow> => {
    const row = plain(await KnowledgeBase.findByPk(id));
    if (!row) throw notFound('Knowledge base');
    return row;
  };
  const answer = async (row: KnowledgeBaseRow) => (await knowledgeBasesJson(db, [row]))[0]!;
  const duplicateName = (name: string) => conflict(`A knowledge base named ${name} already exists`);
  const taken = async (name: string, except?: string) => {
    const other = plain(await KnowledgeBase.findOne({ where: { name } }));
    return other !== null && other.id !== except;
  };

  return [
    route({
      method: 'get',
      path: '/api/knowledge-bases',
      operationId: 'listKnowledgeBases',
      tag: TAG,
      access: 'member',
      summary: 'List knowledge bases',
      description: 'All knowledge bases, by name, with their document and chunk counts.',
      responses: { 200: { description: 'All knowledge bases', schema: z.array(KnowledgeBaseSchema) } },
      async handler() {
        return { status: 200, body: await knowledgeBasesJson(db, plainAll(await KnowledgeBase.findAll({ order: [['name', 'ASC']] }))) };
      },
    }),
    route({
      method: 'get',
      path: '/api/knowledge-bases/{knowledge_base_id}',
      operationId: 'getKnowledgeBase',
      tag: TAG,
      access: 'member',
      summary: 'Get one knowledge base',
      params: BaseIdParam,
      responses: { 200: { description: 'The knowledge base', schema: KnowledgeBaseSchema }, 404: { description: 'No such knowledge base' } },
      async handler({ params }) {
        return { status: 200, body: await answer(await findBase(params.knowledge_base_id as string)) };
      },
    }),
    route({
      method: 'post',
      path: '/api/knowledge-bases',
      operationId: 'createKnowledgeBase',
      tag: TAG,
      access: 'member',
      summary: 'Create a knowledge base',
      description:
        "Its `language` picks the PostgreSQL text search configuration its documents are indexed with (`text_search_config`; `simple`, which does not stem, for a language the server has none for). The caller becomes the owner: members may change, delete and add documents to only their own.",
      body: KnowledgeBaseCreateSchema,
      responses: { 201: { description: 'Created', schema: KnowledgeBaseSchema }, 409: { description: 'A knowledge base with this name exists' } },
      async handler({ body, auth }) {
        if (await taken(body.name)) throw duplicateName(body.name);
        const ts_config = await resolveTextSearchConfig(db.sequelize, body.language);
        try {
          const row = await KnowledgeBase.create({ name: body.name, description: body.description, language: body.language, ts_config, owner_id: auth.userId });
          return { status: 201, body: await answer(plain(row)) };
        } catch (err) {
          if (err instanceof UniqueConstraintError) throw duplicateName(body.name);
          throw err;
        }
      },
    }),
    route({
      method: 'patch',
      path: '/api/knowledge-bases/{knowledge_base_id}',
      operationId: 'updateKnowledgeBase',
      tag: TAG,
      access: 'member',
      summary: 'Rename or describe a knowledge base',
      description: 'Its `language` cannot change (its chunks are indexed in that language\'s configuration): create another base instead.',
      params: BaseIdParam,
      owned,
      body: KnowledgeBasePatchSchema,
      responses: {
        200: { description: 'The updated knowledge base', schema: KnowledgeBaseSchema },
        404: { description: 'No such knowledge base' },
        409: { description: 'Another knowledge base has this name' },
        422: { description: 'Invalid field, or another language' },
      },
      async handler({ params, body }) {
        const current = await findBase(params.knowledge_base_id as string);
        if (body.language !== undefined && body.language !== current.language) throw unprocessable('language', 'cannot be changed after creation; create a new knowledge base');
        if (body.name !== undefined && body.name !== current.name && (await taken(body.name, current.id))) throw duplicateName(body.name);
        const changes: Partial<KnowledgeBaseRow> = {};
        if (body.name !== undefined) changes.name = body.name;
        if (body.description !== undefined) changes.description = body.description;
        try {
          if (Object.keys(changes).length > 0) await KnowledgeBase.update(changes, { where: { id: current.id } });
        } catch (err) {
          if (err instanceof UniqueConstraintError) throw duplicateName(body.name ?? current.name);
          throw err;
        }
        return { status: 200, body: await answer(await findBase(current.id)) };
      },
    }),
    route({
      method: 'delete',
      path: '/api/knowledge-bases/{knowledge_base_id}',
      operationId: 'deleteKnowledgeBase',
      tag: TAG,
      access: 'member',
      summary: 'Delete a knowledge base, its documents and every reference to it',
      description: "In one transaction: its documents and chunks go, it is removed from every agent's and flow node's `knowledge_base_ids`, and each changed agent's `version` goes up. URL refresh schedules are removed.",
      params: BaseIdParam,
      owned,
      responses: { 204: { description: 'Deleted' }, 404: { description: 'No such knowledge base' } },
      async handler({ params }) {
        const id = params.knowledge_base_id as string;
        const documents = plainAll(await KnowledgeDocument.findAll({ where: { knowledge_base_id: id }, attributes: ['id'] }));
        await db.sequelize.transaction(async (transaction) => {
          const base = await KnowledgeBase.findByPk(id, { transaction, lock: transaction.LOCK.UPDATE });
          if (!base) throw notFound('Knowledge base');
          const changed = await removeKnowledgeReferences(db, id, transaction);
          await base.destroy({ transaction });
          for (const agentId of changed) await recordAgentVersion(db, agentId, transaction);
        });
        for (const doc of documents) await removeRefresh(ctx.temporal, doc.id);
        return { status: 204 };
      },
    }),
    route({
      method: 'post',
      path: '/api/knowledge-bases/{knowledge_base_id}/search',
      operationId: 'searchKnowledgeBase',
      tag: TAG,
      access: 'member',
      summary: 'Search a knowledge base (the search tester)',
      description:
        'Ranks its ready documents\' chunks for `query` exactly as a call does: full-text search in the base\'s configuration, trigram similarity when the server has pg_trgm and, with an embeddings provider configured, the cosine similarity of the query\'s embedding, fused by reciprocal rank; the `top_k` best whose score reaches `threshold`. `method` says whether the semantic list took part (`hybrid`) or not (`lexical`, with `semantic_error` when it was configured but failed).',
      params: BaseIdParam,
      body: KnowledgeSearchSchema,
      responses: { 200: { description: 'The ranked passages', schema: KnowledgeSearchResultSchema }, 404: { description: 'No such knowledge base' } },
      async handler({ params, body }) {
        const base = await findBase(params.knowledge_base_id as string);
        const started = performance.now();
        const { passages, method, semanticError } = await retriever.search({ knowledgeBaseIds: [base.id], query: body.query, topK: body.top_k, threshold: body.threshold });
        return { status: 200, body: { query: body.query, passages, ms: Math.round((performance.now() - started) * 10) / 10, method, ...(semanticError ? { semantic_error: semanticError } : {}) } };
      },
    }),
  ];
}
