/**
 * Writes the API's OpenAPI document to a file without a running server or database
 * (scripts/lib/openapi-document.ts), so the dashboard's generated client always matches the code
 * it is built with.
 *
 *   tsx scripts/write-openapi.ts <out.json>
 */
import fs from 'node:fs';
import path from 'node:path';
import { openApiDocument } from './lib/openapi-document';

const out = process.argv[2];
if (!out) {
  process.stderr.write('usage: tsx scripts/write-openapi.ts <out.json>\n');
  process.exit(2);
}
fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
fs.writeFileSync(out, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
