/**
 * The shape the call core keeps (docs/architecture.md): files small enough to read, call
 * workflows changed without patches (they are pinned to their worker's version, docs/versioning.md),
 * workflow code composed rather than inherited, and the turn policy written once.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n');
const sources = tracked.filter((f) => /\.(ts|tsx|js)$/.test(f) && !f.startsWith('test/fixtures/') && !f.startsWith('clients/') && fs.existsSync(path.join(ROOT, f)));
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8');
const workflowFiles = sources.filter((f) => f.startsWith('workflows/'));

describe('code shape', () => {
  it('no source file is over 400 lines', () => {
    const long = sources.map((f) => ({ f, lines: read(f).split('\n').length - 1 })).filter((x) => x.lines > 400);
    expect(long).toEqual([]);
  });

  it('call workflows carry no patches: a change ships as a new worker version', () => {
    const call = workflowFiles.filter((f) => !f.includes('campaign'));
    expect(call.filter((f) => /\bpatched\(|deprecatePatch\(/.test(read(f)))).toEqual([]);
    expect(fs.existsSync(path.join(ROOT, 'workflows', 'call-patches.ts'))).toBe(false);
  });

  it('no workflow class extends another (errors aside)', () => {
    const chains = workflowFiles.flatMap((f) => [...read(f).matchAll(/class\s+(\w+)\s+extends\s+(\w+)/g)].filter((m) => !/Error$/.test(m[2]!)).map((m) => `${f}: ${m[1]} extends ${m[2]}`));
    expect(chains).toEqual([]);
  });

  it('the backchannel and min_words rules live only in the turn policy', () => {
    const elsewhere = sources.filter((f) => !f.startsWith('src/shared/turn-policy/') && !f.startsWith('test/'));
    // The phrase tables and the word-count comparison are the rule; everyone else asks the policy.
    expect(elsewhere.filter((f) => /\bBACKCHANNELS\b|\bINTERRUPTIONS\b/.test(read(f)) && !/import[^;]*turn-policy/.test(read(f)))).toEqual([]);
    expect(elsewhere.filter((f) => /wordCount\([^)]*\)\s*[<>]=?\s*(min_?words|minWords)/i.test(read(f)))).toEqual([]);
  });
});
