/**
 * The speech provider matrix of docs/speech-providers.md, generated from the registries
 * (src/providers/{stt,tts,llm}/registry.ts), so the documentation lists exactly the adapters that
 * exist and what their descriptors say. test/unit/speech-registry.test.ts fails when the page is
 * out of date.
 *
 *   npx tsx scripts/speech-matrix.ts           # print the matrix
 *   npx tsx scripts/speech-matrix.ts --write   # replace it in docs/speech-providers.md
 */
import fs from 'node:fs';
import path from 'node:path';
import { speechMatrix, MATRIX_END, MATRIX_PAGE, MATRIX_START } from '../src/providers/matrix';

const page = path.join(__dirname, '..', MATRIX_PAGE);
if (process.argv.includes('--write')) {
  const text = fs.readFileSync(page, 'utf8');
  const start = text.indexOf(MATRIX_START);
  const end = text.indexOf(MATRIX_END);
  if (start < 0 || end < start) throw new Error(`${MATRIX_PAGE} has no ${MATRIX_START} … ${MATRIX_END} block`);
  fs.writeFileSync(page, `${text.slice(0, start)}${MATRIX_START}\n\n${speechMatrix()}\n${text.slice(end)}`);
  console.log(`${MATRIX_PAGE}: speech provider matrix updated`);
} else {
  process.stdout.write(speechMatrix());
}
