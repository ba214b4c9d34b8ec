// The mistake of a command line's user, which every command (the repository's
// scripts, the package's `edge-image-transformer`) answers with exit status 2
// and its usage text.

/** A usage error: exit status 2 and the usage text. */
export class UsageError extends Error {
  override name = 'UsageError';
}
