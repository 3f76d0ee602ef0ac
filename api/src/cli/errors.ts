/** A mistake in how the command was called: exit code 2, with one precise sentence. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A failure the command reports (the API said no, the database is busy): exit code 1. */
export class CommandError extends Error {
  override name = 'CommandError';
  /** The API's error code, when there is one. */
  readonly code: string | undefined;
  /** A sentence on what to do about it. */
  readonly hint: string | undefined;

  constructor(message: string, details: { code?: string; hint?: string } = {}) {
    super(message);
    this.code = details.code;
    this.hint = details.hint;
  }
}
