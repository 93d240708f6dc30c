/** Request and response shapes of knowledge bases and their documents (docs/knowledge-base.md). */
import { z } from 'zod';
import { DOCUMENT_KINDS, SUPPORTED_EXTENSIONS } from '../../knowledge/document-kinds';
import { KNOWLEDGE_MODES } from '../../shared/knowledge';
import { Timestamp } from './common';

export const KnowledgeMode = z.enum(KNOWLEDGE_MODES).meta({
  id: 'KnowledgeMode',
  description: '`auto`: passages retrieved before every LLM request of a turn; `tool`: the LLM calls `search_knowledge_base` when it decides to',
});
const DocumentKind = z.enum(DOCUMENT_KINDS).meta({ id: 'KnowledgeDocumentKind' });
const DocumentStatus = z.enum(['processing', 'ready', 'failed']).meta({ id: 'KnowledgeDocumentStatus' });
const DocumentSource = z.enum(['upload', 'url']).meta({ id: 'KnowledgeDocumentSource' });

const NameSchema = z.string().trim().min(1, 'must not be empty').max(100).describe('unique');
const LanguageSchema = z
  .string()
  .regex(/^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$/, 'must be a BCP 47 language tag such as en, hi or en-IN')
  .describe("BCP 47; picks PostgreSQL's text search configuration (`simple` for a language it does not stem); fixed after creation");
const RefreshHoursSchema = z.number().int().min(1).max(24 * 30).nullable().describe('URL documents: re-fetched every this many hours (1–720); null: never');

export const KnowledgeBaseCreateSchema = z.object({
  name: NameSchema,
  description: z.string().max(2000).default(''),
  language: LanguageSchema.default('en'),
}).meta({ id: 'KnowledgeBaseCreate' });

export const KnowledgeBasePatchSchema = z.object({
  name: NameSchema.optional(),
  description: z.string().max(2000).optional(),
  language: z.string().optional().describe('may be sent but must equal the current language'),
}).meta({ id: 'KnowledgeBasePatch' });

export const KnowledgeBaseSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  description: z.string(),
  language: z.string(),
  text_search_config: z.string().describe('the PostgreSQL text search configuration its chunks are indexed with'),
  document_count: z.number().int(),
  chunk_count: z.number().int(),
  created_at: Timestamp,
  updated_at: Timestamp,
  owner_id: z.uuid().nullable().describe("the user who created it (members may change only their own); null = the administrators'"),
}).meta({ id: 'KnowledgeBase' });

export const KnowledgeDocumentCreateSchema = z
  .object({
    name: z.string().trim().min(1).max(255).optional().describe(`an upload's file name, whose extension says its kind (${SUPPORTED_EXTENSIONS.join(', ')}); a URL's defaults to the URL`),
    content_base64: z.base64('must be base64').optional().describe('the file, base64-encoded (an upload)'),
    url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional().describe('a page or file to fetch through the outbound request guard (instead of content_base64)'),
    refresh_hours: RefreshHoursSchema.default(null),
  })
  .meta({ id: 'KnowledgeDocumentCreate', description: 'Either an upload (`name` and `content_base64`) or a `url`.' });

export const KnowledgeDocumentSchema = z.object({
  id: z.uuid(),
  knowledge_base_id: z.uuid(),
  name: z.string(),
  source: DocumentSource,
  url: z.string().nullable(),
  kind: DocumentKind.nullable().describe("null until a URL's answer has been fetched"),
  size_bytes: z.number().int(),
  status: DocumentStatus,
  progress: z.number().int().min(0).max(100).describe('percent, while processing'),
  stage: z.string().nullable().describe('while processing: fetching, extracting, chunking, embedding (with semantic search on) or indexing'),
  error: z.string().nullable().describe('why it failed (status failed); a failed refresh keeps the chunks indexed before'),
  chunk_count: z.number().int(),
  refresh_hours: z.number().int().nullable(),
  ingested_at: Timestamp.nullable().describe('when its chunks were last indexed'),
  created_at: Timestamp,
  updated_at: Timestamp,
}).meta({ id: 'KnowledgeDocument' });

export const KnowledgeSearchSchema = z.object({
  query: z.string().trim().min(1, 'must not be empty').max(1000),
  top_k: z.number().int().min(1).max(20).default(5),
  threshold: z.number().min(0).max(1).default(0).describe('leave out passages whose score is below it'),
}).meta({ id: 'KnowledgeSearch' });

const PassageSchema = z.object({
  chunk_id: z.uuid(),
  knowledge_base_id: z.uuid(),
  document_id: z.uuid(),
  document: z.string().describe("the document's name"),
  heading: z.string().describe('the heading path, ` > `-separated; empty at the top of a document'),
  content: z.string(),
  score: z.number().describe('the best relevance a ranking gave it, 0–1 (passages are ordered by reciprocal rank fusion)'),
}).meta({ id: 'KnowledgePassage' });

export const KnowledgeSearchResultSchema = z.object({
  query: z.string(),
  passages: z.array(PassageSchema),
  ms: z.number().describe('time the retrieval took'),
  method: z.enum(['lexical', 'hybrid']).describe('`hybrid`: full text fused with the semantic (embedding) ranking; `lexical`: full text alone (no embeddings configured, or the semantic side failed)'),
  semantic_error: z.string().optional().describe('why a configured semantic search was left out of this one'),
}).meta({ id: 'KnowledgeSearchResult' });
