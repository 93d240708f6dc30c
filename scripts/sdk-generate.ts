/**
 * Regenerates the clients/ folder from the code (`npm run sdk:generate`): clients/openapi.json and
 * the TypeScript SDK's types. Run it after changing a route or a schema; `npm test` fails while
 * the checked-in files differ (test/unit/openapi-contract.test.ts).
 *
 *   tsx scripts/sdk-generate.ts [--print]   (--print: the files as one JSON object on stdout, nothing written)
 */
import fs from 'node:fs';
import path from 'node:path';
import { sdkFiles } from './lib/sdk-files';

const ROOT = path.join(__dirname, '..');

void (async () => {
  const files = await sdkFiles();
  // The drift test asks for them this way: openapi-typescript is ESM underneath, which jest's
  // CommonJS sandbox cannot load.
  if (process.argv.includes('--print')) {
    process.stdout.write(JSON.stringify(files));
    return;
  }
  for (const [file, text] of Object.entries(files)) {
    const target = path.join(ROOT, file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const before = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : null;
    if (before === text) continue;
    fs.writeFileSync(target, text);
    process.stdout.write(`wrote ${file}\n`);
  }
})();
