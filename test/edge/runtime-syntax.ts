// The language of cloudfront-js-2.0, as its documentation lists it: ES 5.1,
// plus const/let, arrow functions, rest parameters, template literals, the
// exponent operator, and async/await on top-level function declarations
// only ("async arguments and closures are not supported"); imports of the
// built-in modules `crypto` and `cloudfront`. Anything else (classes, spread,
// destructuring, default parameters, for-of, generators, optional chaining,
// `??`, optional catch binding, shorthand or computed properties, methods,
// tagged templates, top-level await, ...) is refused.
//
// The check is a whitelist: a node type not named here is an error, so a
// newer construct that slips into the grammar fails the suite rather than the
// deployment.

import { parse } from 'acorn';

type Node = { type: string; start: number; end: number; [field: string]: unknown };

const ALLOWED = new Set([
  'Program',
  'ImportDeclaration',
  'ImportDefaultSpecifier',
  'VariableDeclaration',
  'VariableDeclarator',
  'FunctionDeclaration',
  'FunctionExpression',
  'ArrowFunctionExpression',
  'RestElement',
  'ExpressionStatement',
  'BlockStatement',
  'EmptyStatement',
  'ReturnStatement',
  'IfStatement',
  'ForStatement',
  'ForInStatement',
  'WhileStatement',
  'DoWhileStatement',
  'BreakStatement',
  'ContinueStatement',
  'LabeledStatement',
  'SwitchStatement',
  'SwitchCase',
  'ThrowStatement',
  'TryStatement',
  'CatchClause',
  'Identifier',
  'Literal',
  'ThisExpression',
  'ArrayExpression',
  'ObjectExpression',
  'Property',
  'MemberExpression',
  'CallExpression',
  'NewExpression',
  'UnaryExpression',
  'UpdateExpression',
  'BinaryExpression',
  'LogicalExpression',
  'AssignmentExpression',
  'ConditionalExpression',
  'SequenceExpression',
  'TemplateLiteral',
  'TemplateElement',
  'AwaitExpression',
]);

const ES5_ASSIGNMENTS = new Set(['=', '+=', '-=', '*=', '/=', '%=', '<<=', '>>=', '>>>=', '|=', '^=', '&=', '**=']);
const REGEXP_FLAGS = /^[gim]*$/;
const MODULES = new Set(['crypto', 'cloudfront']);

export interface SyntaxProblem {
  message: string;
  /** A little of the source around the node. */
  near: string;
}

/** Every construct in `code` that cloudfront-js-2.0 does not run; empty when it is fine. */
export function unsupportedSyntax(code: string): SyntaxProblem[] {
  const problems: SyntaxProblem[] = [];
  let program: Node;
  try {
    program = parse(code, { ecmaVersion: 'latest', sourceType: 'module' }) as unknown as Node;
  } catch (error) {
    return [{ message: `does not parse: ${(error as Error).message}`, near: '' }];
  }
  const report = (node: Node, message: string) =>
    problems.push({ message, near: code.slice(Math.max(0, node.start - 20), Math.min(code.length, node.end + 20)).slice(0, 120) });

  function checkParams(fn: Node) {
    for (const param of fn.params as Node[]) {
      if (param.type === 'Identifier') continue;
      if (param.type === 'RestElement' && (param.argument as Node).type === 'Identifier') continue;
      report(param, `parameter ${param.type} (default values and destructuring are not supported)`);
    }
  }

  function visit(node: Node, parent: Node | undefined, inAsync: boolean) {
    if (!ALLOWED.has(node.type)) report(node, `${node.type} is not supported`);
    switch (node.type) {
      case 'ImportDeclaration':
        if (parent?.type !== 'Program') report(node, 'import outside the top level');
        if (!MODULES.has(String((node.source as Node).value))) report(node, `import of "${(node.source as Node).value}"`);
        break;
      case 'FunctionDeclaration':
      case 'FunctionExpression':
      case 'ArrowFunctionExpression':
        if (node.generator) report(node, 'generator function');
        if (node.async && !(node.type === 'FunctionDeclaration' && parent?.type === 'Program')) {
          report(node, 'async function that is not a top-level declaration');
        }
        checkParams(node);
        break;
      case 'VariableDeclarator':
        if ((node.id as Node).type !== 'Identifier') report(node, `${(node.id as Node).type} (destructuring)`);
        break;
      case 'CatchClause':
        if (!node.param) report(node, 'optional catch binding');
        else if ((node.param as Node).type !== 'Identifier') report(node, 'destructuring catch parameter');
        break;
      case 'ForInStatement': {
        const left = node.left as Node;
        const target = left.type === 'VariableDeclaration' ? ((left.declarations as Node[])[0] as Node).id : left;
        if ((target as Node).type !== 'Identifier' && (target as Node).type !== 'MemberExpression') {
          report(node, 'destructuring in for-in');
        }
        break;
      }
      case 'Property':
        if (node.shorthand) report(node, 'shorthand property');
        if (node.method) report(node, 'method definition');
        if (node.computed) report(node, 'computed property name');
        break;
      case 'MemberExpression':
      case 'CallExpression':
        if (node.optional) report(node, 'optional chaining');
        break;
      case 'LogicalExpression':
        if (node.operator === '??') report(node, 'nullish coalescing (??)');
        break;
      case 'AssignmentExpression':
        if (!ES5_ASSIGNMENTS.has(String(node.operator))) report(node, `assignment operator ${node.operator}`);
        if ((node.left as Node).type !== 'Identifier' && (node.left as Node).type !== 'MemberExpression') {
          report(node, 'destructuring assignment');
        }
        break;
      case 'ArrayExpression':
        if ((node.elements as (Node | null)[]).some((element) => element === null)) report(node, 'array hole');
        break;
      case 'Literal':
        if (node.regex && !REGEXP_FLAGS.test((node.regex as { flags: string }).flags)) {
          report(node, `regular expression flags /${(node.regex as { flags: string }).flags}`);
        }
        if (typeof node.bigint === 'string') report(node, 'BigInt literal');
        break;
      case 'AwaitExpression':
        if (!inAsync) report(node, 'await outside an async function');
        break;
    }
    const isFunction = node.type.endsWith('FunctionDeclaration') || node.type.endsWith('FunctionExpression');
    const childInAsync = isFunction ? node.async === true : inAsync;
    for (const [field, value] of Object.entries(node)) {
      if (field === 'regex') continue;
      if (Array.isArray(value)) {
        for (const child of value) if (isNode(child)) visit(child, node, childInAsync);
      } else if (isNode(value)) {
        visit(value, node, childInAsync);
      }
    }
  }

  visit(program, undefined, false);
  return problems;
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && typeof (value as Node).type === 'string';
}
