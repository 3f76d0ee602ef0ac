import { type DatabaseHandle, isDatabaseUnavailable } from '@gatehouse/core/db';
import { GatehouseError } from '@gatehouse/core/errors';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

/** What a client is told to wait before retrying while the database is away (the standby takes over in ~3 s). */
export const DATABASE_RETRY_AFTER_SECONDS = 5;
/** While the database is down, at most one background probe per this interval looks for its return. */
const RECOVERY_PROBE_MS = 2000;

/**
 * Whether the database answers, as last seen by requests and readiness probes. Losing it or getting it
 * back is logged once per change, never once per request, and never with the query text: a lost database
 * under load used to log every failing statement in full (issue 11, finding 5).
 */
export class DatabaseHealth {
  readonly #database: DatabaseHandle;
  readonly #logger: Logger;
  #down = false;
  #probedAt = 0;
  #probing: Promise<void> | undefined;

  constructor(database: DatabaseHandle, logger: Logger) {
    this.#database = database;
    this.#logger = logger;
  }

  get down(): boolean {
    return this.#down;
  }

  /** Records a failure that `isDatabaseUnavailable` recognised; logs only the transition to down. */
  failed(error: unknown): void {
    if (this.#down) return;
    this.#down = true;
    this.#probedAt = Date.now();
    this.#logger.error(
      { database: this.#database.kind, cause: errorCode(error) },
      'database unreachable: answering 503 database_unavailable until it returns',
    );
  }

  /** Records a successful round trip; logs only the transition back to up. */
  succeeded(): void {
    if (!this.#down) return;
    this.#down = false;
    this.#logger.info({ database: this.#database.kind }, 'database reachable again');
  }

  /** One round trip; the outcome updates the state. Throws `database_unavailable` when it fails. */
  async ping(): Promise<void> {
    try {
      await this.#database.ping();
    } catch (error) {
      this.failed(error);
      throw unavailable();
    }
    this.succeeded();
  }

  /** While down, starts a background probe at most every RECOVERY_PROBE_MS, so recovery is noticed without traffic to /readyz. */
  probeIfDown(): void {
    if (!this.#down || this.#probing || Date.now() - this.#probedAt < RECOVERY_PROBE_MS) return;
    this.#probedAt = Date.now();
    this.#probing = this.ping()
      .catch(() => {})
      .finally(() => {
        this.#probing = undefined;
      });
  }
}

/** The 503 every route answers while the database is unreachable. */
export function unavailable(): GatehouseError {
  return new GatehouseError('database_unavailable', undefined, {
    'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS),
  });
}

/**
 * Right after the error envelope: a request that failed because the database cannot be reached answers
 * 503 `database_unavailable` with Retry-After instead of 500, and the failure is recorded once.
 */
export function databaseErrors(health: DatabaseHealth): Middleware {
  const translate = (error: unknown): never => {
    if (!(error instanceof GatehouseError) && isDatabaseUnavailable(error)) {
      health.failed(error);
      throw unavailable();
    }
    throw error;
  };
  // A rejection handler on next()'s promise rather than an async frame per request (issue 14).
  return function databaseErrors(_ctx, next) {
    health.probeIfDown();
    return next().catch(translate);
  };
}

/** The driver's error code (ECONNREFUSED, CONNECTION_CLOSED, 57P01...), never its message or query. */
function errorCode(error: unknown): string {
  let e = error as { code?: unknown; cause?: unknown } | undefined;
  for (let i = 0; e && i < 5; i++) {
    if (typeof e.code === 'string') return e.code;
    e = e.cause as typeof e;
  }
  return 'unknown';
}
