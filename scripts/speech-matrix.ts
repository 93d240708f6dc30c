/**
 * The README's speech provider matrix, generated from the registries (src/providers/{stt,tts,llm}/
 * registry.ts), so the documentation lists exactly the adapters that exist and what their
 * descriptors say. test/unit/speech-registry.test.ts fails when README.md is out of date.
 *
 *   npx tsx scripts/speech-matrix.ts           # print the matrix
 *   npx tsx scripts/speech-matrix.ts --write   # replace it in README.md
 */
import fs from 'node:fs';
import path from 'node:path';
import { speechMatrix, MATRIX_END, MATRIX_START } from '../src/providers/matrix';

const readme = path.join(__dirname, '..', 'README.md');
if (process.argv.includes('--write')) {
  const text = fs.readFileSync(readme, 'utf8');
  const start = text.indexOf(MATRIX_START);
  const end = text.indexOf(MATRIX_END);
  if (start < 0 || end < start) throw new Error(`README.md has no ${MATRIX_START} … ${MATRIX_END} block`);
  fs.writeFileSync(readme, `${text.slice(0, start)}${MATRIX_START}\n\n${speechMatrix()}\n${text.slice(end)}`);
  console.log('README.md: speech provider matrix updated');
} else {
  process.stdout.write(speechMatrix());
}
