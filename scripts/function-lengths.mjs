// `npm run check:functions`: no function in the service's sources is longer than 70 lines
// (TigerBeetle's rule, which our style takes): a function that does not fit on a screen does more
// than one thing, and its reader has to hold all of it at once.
//
// The sources are the build's: the files `tsconfig.build.json` includes (its `include` directories,
// so a new top-level directory is checked as soon as it is built). Every function counts: declared,
// methods, constructors, accessors, arrow functions and function expressions (a route's handler
// too), each measured from its first line to its closing brace, comments inside included.
//
// The one exception is a function whose comment lines right above it include one starting with
// `// long:` followed by the reason (a migration's DDL script, applied as written, is the case it
// is for): the reason is the reader's, and the check lists these apart.
//
// Prints each offender as `file:line name (N lines)` and exits 1 if there is any, 0 otherwise.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const MAX_LINES = 70;
const LONG_REASON = /^\/\/\s*long:\s*\S/;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The TypeScript sources the build compiles (tsconfig.build.json's `include`, minus its `exclude`). */
function buildSources() {
  const configPath = path.join(root, 'tsconfig.build.json');
  const { config, error } = ts.readConfigFile(configPath, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  if (!Array.isArray(config.include) || config.include.length === 0) throw new Error(`${configPath} has no "include" list`);
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, root, undefined, configPath);
  return parsed.fileNames.filter((f) => /\.[cm]?tsx?$/.test(f) && !/\.d\.[cm]?ts$/.test(f)).sort();
}

const isFunction = (n) => ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isConstructorDeclaration(n)
  || ts.isGetAccessorDeclaration(n) || ts.isSetAccessorDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n);

/** A name a reader can find the function by: its own, its variable's or property's, or the call it is passed to. */
function nameOf(n) {
  const own = n.name?.getText();
  const owner = n.parent && ts.isClassLike(n.parent) ? `${n.parent.name?.getText() ?? '(class)'}.` : '';
  if (ts.isConstructorDeclaration(n)) return `${owner}constructor`;
  if (own) return `${owner}${own}`;
  const p = n.parent;
  if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) return p.name.getText();
  if (ts.isCallExpression(p)) {
    const first = p.arguments[0];
    const label = first && ts.isStringLiteralLike(first) ? `(${first.getText()})` : '';
    return `${p.expression.getText()}${label} callback`;
  }
  return '(anonymous)';
}

/** The `// long:` reason in the comment lines right above `line` (0-based), if any. */
function longReason(lines, line) {
  for (let i = line - 1; i >= 0; i--) {
    const text = lines[i].trim();
    if (!(text.startsWith('//') || text.startsWith('/*') || text.startsWith('*'))) return undefined;
    if (LONG_REASON.test(text)) return text.replace(/^\/\/\s*long:\s*/, '');
  }
  return undefined;
}

/** Every function over MAX_LINES in one file, with its `// long:` reason when it has one. */
function longFunctions(file) {
  const text = fs.readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lines = text.split(/\r?\n/);
  const found = [];
  const visit = (n) => {
    if (isFunction(n) && n.body) {
      const first = source.getLineAndCharacterOfPosition(n.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(n.end).line;
      const length = last - first + 1;
      if (length > MAX_LINES) {
        found.push({ where: `${path.relative(root, file)}:${first + 1}`, name: nameOf(n), length, reason: longReason(lines, first) });
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(source);
  return found;
}

const all = buildSources().flatMap(longFunctions);
const offenders = all.filter((f) => f.reason === undefined);
const excepted = all.filter((f) => f.reason !== undefined);
for (const f of excepted) console.log(`allowed: ${f.where} ${f.name} (${f.length} lines): long: ${f.reason}`);
for (const f of offenders) console.log(`${f.where} ${f.name} (${f.length} lines)`);
if (offenders.length > 0) {
  console.log(`${offenders.length} function(s) over ${MAX_LINES} lines: split them, or say why above one with \`// long: <reason>\``);
  process.exit(1);
}
console.log(`no function over ${MAX_LINES} lines (${excepted.length} with a \`// long:\` reason)`);
