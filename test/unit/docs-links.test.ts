/**
 * Every relative link, image and `#anchor` in README.md and docs/ resolves, with GitHub's heading slugs,
 * so the documentation stays navigable as pages move and headings change. The check is
 * remark-validate-links (offline: files and headings of this checkout only) run by remark-cli;
 * its report names the file, line and link of every broken one.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = path.join(__dirname, '..', '..');
const remarkCli = path.join(root, 'node_modules', 'remark-cli', 'cli.js');
// By path: remark-cli resolves a plugin name from its working directory, which is not always ours.
const validateLinks = path.join(root, 'node_modules', 'remark-validate-links', 'index.js');

async function checkLinks(cwd: string, paths: string[]): Promise<{ passed: boolean; report: string }> {
  // --frail: warnings (a broken link is one) fail the run; repository:false: no Git remote needed.
  const args = [remarkCli, '--no-config', '--use', `${validateLinks}=repository:false`, '--frail', '--quiet', '--no-stdout', '--no-color', ...paths];
  try {
    const { stderr } = await run(process.execPath, args, { cwd });
    return { passed: true, report: stderr.trim() };
  } catch (err) {
    const { stderr, message } = err as { stderr?: string; message: string };
    return { passed: false, report: (stderr || message).trim() };
  }
}

it('README.md and docs/ have no broken relative link or anchor', async () => {
  const result = await checkLinks(root, ['README.md', 'docs']);
  expect(result).toEqual({ passed: true, report: '' });
}, 60_000);

it('the images of raw HTML (<img src>, which remark does not check) exist', () => {
  const pages = ['README.md', ...fs.readdirSync(path.join(root, 'docs'), { recursive: true }).map((p) => path.join('docs', String(p)))];
  const images = pages
    .filter((page) => page.endsWith('.md'))
    .flatMap((page) => [...fs.readFileSync(path.join(root, page), 'utf8').matchAll(/<img\s[^>]*src="([^"]+)"/g)].map((m) => ({ page, src: m[1]! })))
    .filter(({ src }) => !/^[a-z]+:/i.test(src));
  expect(images.length).toBeGreaterThan(0);
  for (const { page, src } of images) {
    expect({ page, src, exists: fs.existsSync(path.join(root, path.dirname(page), src)) }).toEqual({ page, src, exists: true });
  }
});

it('reports a missing page, a missing heading in another page and a wrong duplicate-heading anchor', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-links-'));
  try {
    fs.mkdirSync(path.join(dir, 'docs'));
    fs.writeFileSync(
      path.join(dir, 'README.md'),
      [
        '# Readme',
        '## Events',
        '## Events',
        '[fine](docs/calls.md#following-a-call-live-get-apicallscall_ideventsstream) [fine](#events-1)',
        '[gone](docs/missing.md) [no heading](docs/calls.md#call-status) [third events](#events-2)',
      ].join('\n\n'),
    );
    fs.writeFileSync(path.join(dir, 'docs', 'calls.md'), '# Calls\n\n## Following a call live: `GET /api/calls/{call_id}/events/stream`\n');
    const { passed, report } = await checkLinks(dir, ['README.md', 'docs']);
    expect(passed).toBe(false);
    const broken = report.split('\n').filter((line) => / warning /.test(line));
    expect(broken).toHaveLength(3);
    expect(report).toMatch(/Cannot find file `docs\/missing\.md`/);
    expect(report).toMatch(/Cannot find heading for `#call-status` in `docs\/calls\.md`/);
    expect(report).toMatch(/Cannot find heading for `#events-2`/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
