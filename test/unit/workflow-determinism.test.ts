/**
 * Workflow code must stay deterministic: no Node built-ins, no I/O libraries, and activities
 * imported as types only (the worker's bundler would otherwise pull their code into the sandbox).
 */
import fs from 'node:fs';
import path from 'node:path';

const DIR = path.join(__dirname, '..', '..', 'workflows');
// Pure constants shared with the rest of the code (search attribute keys, template substitution,
// the analysis's event name and retry defaults, the transfer tool's shapes, the turn policy, MCP tool naming,
// the knowledge context message, the warm transfer's briefing prompts).
const ALLOWED_RUNTIME_IMPORTS = [/^@temporalio\/workflow$/, /^@temporalio\/common$/, /^\.\//, /^\.\.\/src\/shared\/(template|search-attributes|transfer|dtmf-keys|turn-policy|mcp-tools|knowledge|warm-briefing)$/, /^\.\.\/src\/analysis\/types$/,
  // Temporal's own OpenTelemetry workflow interceptors, written for the sandbox (docs/tracing.md).
  /^@temporalio\/interceptors-opentelemetry\/lib\/workflow$/];

describe('workflow code', () => {
  const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.ts'));

  it.each(files)('%s imports only workflow-safe modules at run time', (file) => {
    const source = fs.readFileSync(path.join(DIR, file), 'utf8');
    const runtimeImports = [...source.matchAll(/^import\s+(?!type\b)[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1]!);
    const unsafe = runtimeImports.filter((spec) => !ALLOWED_RUNTIME_IMPORTS.some((re) => re.test(spec)));
    expect(unsafe).toEqual([]);
    expect(source).not.toMatch(/from '(node:)?(fs|net|http|https|crypto|child_process|os|path)'/);
  });
});
