import { type DatabaseHandle, isDatabaseUnavailable } from '@gatehouse/core/db';
import { GatehouseError } from '@gatehouse/core/errors';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

/** What a client is told to wait before retrying while the database is away (the standby takes over in ~3 s). */
export const DATABASE_RETRY_AFTER_SECONDS = 5;
/** While the database is down, at most one background probe per this interval looks for its return. */
const RECOVERY_PROBE_MS = 2000;
/** A round trip that has not come back within this is a failure (a database gone silent never answers). */
export const PING_TIMEOUT_MS = 2000;
/**
 * A request still waiting after this makes the watchdog ask the database (one bounded ping); while the
 * database is known down, requests waiting this long are answered 503 at once instead of waiting for a
 * connection that may never answer.
 */
export const STALLED_REQUEST_MS = 2000;

/**
 * Whether the database answers, as last seen by requests and readiness probes. Losing it or getting it
 * back is logged once per change, never once per request, and never with the query text: under load a
 * lost database would otherwise fill the log with every failing statement in full.
 */
export class DatabaseHealth {
  readonly #database: DatabaseHandle;
  readonly #logger: Logger;
  #down = false;
  #probedAt = 0;
  #probing: Promise<void> | undefined;
  /** Requests in flight: when each started and how to answer it 503 if the database is lost under it. */
  readonly #inFlight = new Set<{ started: number; abandon: (error: Error) => void }>();
  #watchdog: NodeJS.Timeout | undefined;

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
    this.#abandonStalled(Date.now());
  }

  /** Records a successful round trip; logs only the transition back to up. */
  succeeded(): void {
    if (!this.#down) return;
    this.#down = false;
    this.#logger.info({ database: this.#database.kind }, 'database reachable again');
  }

  /** One round trip, bounded by PING_TIMEOUT_MS; the outcome updates the state. Throws `database_unavailable` when it fails. */
  async ping(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(Object.assign(new Error('ping timed out'), { code: 'ETIMEDOUT' })),
        PING_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([this.#database.ping(), silent]);
    } catch (error) {
      this.failed(error);
      throw unavailable();
    } finally {
      clearTimeout(timer);
    }
    this.succeeded();
  }

  /**
   * Runs one request's remaining layers; they are answered 503 if the database is lost while they wait
   * (a connection that went silent mid-query would otherwise hold the request until TCP gives up).
   */
  guard<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const request = { started: Date.now(), abandon: reject };
      this.#inFlight.add(request);
      this.#watch();
      work.then(
        (value) => {
          this.#inFlight.delete(request);
          resolve(value);
        },
        (error: unknown) => {
          this.#inFlight.delete(request);
          reject(error);
        },
      );
    });
  }

  /** One timer for every request in flight, armed only while there are some. */
  #watch(): void {
    if (this.#watchdog) return;
    this.#watchdog = setInterval(() => {
      if (this.#inFlight.size === 0) {
        clearInterval(this.#watchdog);
        this.#watchdog = undefined;
        return;
      }
      const now = Date.now();
      let stalled = false;
      for (const { started } of this.#inFlight) if (now - started >= STALLED_REQUEST_MS) stalled = true;
      if (!stalled) return;
      if (this.#down) this.#abandonStalled(now);
      else if (!this.#probing && now - this.#probedAt >= RECOVERY_PROBE_MS) {
        this.#probedAt = now;
        this.#probing = this.ping()
          .catch(() => {})
          .finally(() => {
            this.#probing = undefined;
          });
      }
    }, STALLED_REQUEST_MS / 4);
    this.#watchdog.unref();
  }

  /** Answers 503 every request that has waited STALLED_REQUEST_MS or more. */
  #abandonStalled(now: number): void {
    for (const request of this.#inFlight) {
      if (now - request.started < STALLED_REQUEST_MS) continue;
      this.#inFlight.delete(request);
      request.abandon(unavailable());
    }
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
  // A rejection handler on next()'s promise rather than an async frame per request.
  return function databaseErrors(_ctx, next) {
    health.probeIfDown();
    return health.guard(next()).catch(translate);
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
