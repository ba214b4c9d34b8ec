// The grammar's one error type. It is a plain Error with a code rather than a
// class because the grammar is also compiled into a CloudFront Function, whose
// runtime (cloudfront-js-2.0) is ES5.1 plus a few later features.

export type GrammarErrorCode = 'invalid_parameter' | 'invalid_key' | 'not_canonical';

export interface GrammarError extends Error {
  name: 'GrammarError';
  code: GrammarErrorCode;
}

const NAME = 'GrammarError';

export const grammarError = (code: GrammarErrorCode, message: string): GrammarError => {
  const error = Error(message) as GrammarError;
  error.name = NAME;
  error.code = code;
  return error;
};

export const isGrammarError = (error: unknown): error is GrammarError => error instanceof Error && error.name === NAME;
