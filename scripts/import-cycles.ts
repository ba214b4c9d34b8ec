// `npm run import-cycles` (part of `npm run lint`)
//
// Finds circles of value imports among the project's own modules in lambda/,
// lib/ and local/: a module that, through its imports, imports itself. Such
// a circle makes the load order decide what a module sees (a value still
// undefined while the circle loads), and says that two concerns are not
// separated. Type-only imports (`import type`, `{ type X }`) are erased at
// compile time and do not count; nor do dynamic `import()` calls, which load
// later. Prints each circle; exits 1 if there is one.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { runIfMain } from './operator-command';

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CHECKED_FOLDERS = ['lambda', 'lib', 'local'];
const SOURCE = /\.(ts|js)$/;

/** The source files below `folder`, declaration files left out. */
function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return SOURCE.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Whether an import or export declaration brings a value at run time. */
function bringsValue(statement: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(statement)) {
    if (statement.isTypeOnly) return false;
    const exported = statement.exportClause;
    return !exported || !ts.isNamedExports(exported) || exported.elements.some((element) => !element.isTypeOnly);
  }
  const clause = statement.importClause;
  if (!clause) return true; // a bare `import './x'` runs the module
  if (clause.isTypeOnly) return false;
  if (clause.name) return true;
  const bindings = clause.namedBindings;
  return (
    !bindings ||
    ts.isNamespaceImport(bindings) ||
    bindings.elements.length === 0 ||
    bindings.elements.some((element) => !element.isTypeOnly)
  );
}

/** The file a relative specifier names, as TypeScript and esbuild resolve it; undefined for a package. */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  const candidates = [base, base.replace(/\.js$/, '.ts'), `${base}.ts`, `${base}.js`, join(base, 'index.ts'), join(base, 'index.js')];
  return candidates.find((candidate) => SOURCE.test(candidate) && existsSync(candidate) && statSync(candidate).isFile());
}

/** Each file's value imports among the project's own files. */
export function valueImports(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
    const targets = source.statements
      .filter(
        (statement): statement is ts.ImportDeclaration | ts.ExportDeclaration =>
          ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement),
      )
      .filter((statement) => statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier) && bringsValue(statement))
      .map((statement) => resolveSpecifier(file, (statement.moduleSpecifier as ts.StringLiteral).text))
      .filter((target): target is string => target !== undefined);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The circles of `graph`: its strongly connected components of more than one file, or a file that imports itself (Tarjan's algorithm). */
export function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)?.includes(file)) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

/** Checks the folders below `root`; writes each circle to `write`; returns the exit status. */
export function checkImportCycles(root: string, write: (line: string) => void, folders = CHECKED_FOLDERS): number {
  const files = folders
    .map((folder) => join(root, folder))
    .filter(existsSync)
    .flatMap(sourceFiles);
  const found = circles(valueImports(files));
  for (const circle of found) write(`import circle: ${circle.map((file) => relative(root, file)).join(' <-> ')}`);
  if (found.length === 0) write(`no import circle among ${files.length} files in ${folders.join(', ')}`);
  return found.length === 0 ? 0 : 1;
}

runIfMain(import.meta.url, async () => checkImportCycles(PROJECT_ROOT, (line) => console.log(line)));
