/**
 * A vendor is its folder and its registry line: no other file of src/ names it. The check reads
 * the code as the compiler does (comments are docs text and may name vendors) and looks at
 * identifiers and string, template and regex literals, case-insensitively: `twilioVendor`,
 * `'twilio'`, `'/telephony/twilio/…'`, `TWILIO_API_BASE_URL` and `createOpenAIClient` all count.
 *
 * Allowed:
 * - files under a folder named after the vendor, or `<vendor>-…` for a part two of its
 *   descriptors share (src/providers/azure-speech/);
 * - in a registry (src/providers/<kind>/registry.ts), the import of a vendor's folder and the
 *   binding it creates (the registry line);
 * - npm packages and the names they export (`import OpenAI from 'openai'`: the protocol SDK
 *   that every OpenAI-compatible LLM vendor is spoken through, not a provider name);
 * - migrations that are history: they describe tables as they were;
 * - the few mentions ALLOWED lists, each with its reason.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { LLM_VENDORS } from '../../src/providers/llm/registry';
import { STT_VENDORS } from '../../src/providers/stt/registry';
import { telephonyDescriptors } from '../../src/providers/telephony/registry';
import { TTS_VENDORS } from '../../src/providers/tts/registry';

const SRC = path.join(__dirname, '..', '..', 'src');
const NAMED = ['twilio', 'exotel', 'plivo', 'deepgram', 'cartesia', 'elevenlabs', 'sarvam', 'azure', 'openai', 'groq'];
const VENDORS = [...new Set([...NAMED, ...telephonyDescriptors().map((v) => v.name), ...[...STT_VENDORS, ...TTS_VENDORS, ...LLM_VENDORS].map((v) => v.name)])];
const HISTORY = new Set(['db/migrations/0001-initial.ts']);
const REGISTRY = /^providers\/[a-z]+\/registry\.ts$/;
const ALLOWED: Array<{ file: string; vendor: string; why: string }> = [
  { file: 'providers/llm/groq/index.ts', vendor: 'openai', why: "Groq's own endpoint is /openai/v1: the protocol it speaks, named by Groq" },
];
const allowed = (leak: Leak) => ALLOWED.some((a) => a.file === leak.file && a.vendor === leak.vendor);

interface Leak {
  file: string;
  line: number;
  vendor: string;
  text: string;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(full) : /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** The vendor named by `text`: the name anywhere in an identifier, or as a word of a literal. */
function vendorIn(text: string, kind: 'identifier' | 'literal'): string | undefined {
  const lower = text.toLowerCase();
  return VENDORS.find((v) => (kind === 'identifier' ? lower.includes(v) : new RegExp(`(^|[^a-z0-9])${v}([^a-z0-9]|$)`).test(lower)));
}

const inVendorFolder = (relative: string, vendor: string) => relative.split('/').slice(0, -1).some((dir) => dir === vendor || dir.startsWith(`${vendor}-`));
const isPackage = (specifier: string) => !specifier.startsWith('.');

/** The names an import binds (default, namespace, named). */
function importedNames(decl: ts.ImportDeclaration): string[] {
  const clause = decl.importClause;
  if (!clause) return [];
  const names = clause.name ? [clause.name.text] : [];
  const bindings = clause.namedBindings;
  if (bindings && ts.isNamespaceImport(bindings)) names.push(bindings.name.text);
  if (bindings && ts.isNamedImports(bindings)) names.push(...bindings.elements.map((e) => e.name.text));
  return names;
}

export function leaksIn(file: string, code: string, relative: string): Leak[] {
  const source = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const allowedNames = new Set<string>();
  const allowedSpecifiers = new Set<ts.Node>();
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const registryLine = REGISTRY.test(relative);
    if (isPackage(statement.moduleSpecifier.text) || registryLine) {
      allowedSpecifiers.add(statement.moduleSpecifier);
      for (const name of importedNames(statement)) allowedNames.add(name);
    }
  }
  const leaks: Leak[] = [];
  const report = (node: ts.Node, text: string, kind: 'identifier' | 'literal') => {
    const vendor = vendorIn(text, kind);
    if (!vendor || inVendorFolder(relative, vendor)) return;
    const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
    leaks.push({ file: relative, line, vendor, text: text.slice(0, 80) });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) {
      if (!allowedNames.has(node.text)) report(node, node.text, 'identifier');
    } else if (ts.isStringLiteralLike(node) || ts.isRegularExpressionLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      const dynamicImport = ts.isCallExpression(node.parent) && node.parent.expression.kind === ts.SyntaxKind.ImportKeyword && isPackage(node.text);
      if (!allowedSpecifiers.has(node) && !dynamicImport) report(node, node.text, 'literal');
    } else if (ts.isJsxText(node)) {
      report(node, node.text, 'literal');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return leaks;
}

describe('vendor names', () => {
  it('appear in src/ only in the vendor folders and the registry lines', () => {
    const leaks = sourceFiles(SRC).flatMap((file) => {
      const relative = path.relative(SRC, file).split(path.sep).join('/');
      return HISTORY.has(relative) ? [] : leaksIn(file, fs.readFileSync(file, 'utf8'), relative).filter((l) => !allowed(l));
    });
    expect(leaks.map((l) => `${l.file}:${l.line} ${l.vendor}: ${l.text}`)).toEqual([]);
  });

  it('are caught in identifiers, literals and paths, not in comments, packages or the registry line', () => {
    const code = [
      '// Twilio signs its webhooks: docs text.',
      "import OpenAI from 'openai';",
      "import { descriptor as twilio } from './twilio';",
      'const client: OpenAI | null = null;',
      "const vendor = 'plivo';",
      'const TWILIO_API_BASE_URL = 1;',
      'const url = `/telephony/exotel/${vendor}`;',
      'function createOpenAIClient() {}',
      "const prose = 'Sarvam: saarika';",
    ].join('\n');
    const outside = leaksIn('x.ts', code, 'api/x.ts').map((l) => `${l.line} ${l.vendor}`);
    expect(outside).toEqual(['3 twilio', '3 twilio', '5 plivo', '6 twilio', '7 exotel', '8 openai', '9 sarvam']);
    expect(leaksIn('x.ts', code, 'providers/stt/registry.ts').map((l) => `${l.line} ${l.vendor}`)).toEqual(['5 plivo', '6 twilio', '7 exotel', '8 openai', '9 sarvam']);
    expect(leaksIn('x.ts', "const a = 'twilio';", 'providers/telephony/twilio/index.ts')).toEqual([]);
    expect(leaksIn('x.ts', "const a = 'azure';", 'providers/azure-speech/speech-config.ts')).toEqual([]);
  });
});
