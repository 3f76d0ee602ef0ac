import { randomBytes } from 'node:crypto';
import { constantTimeEqual, deriveKey, hmac, type MacKey, macKey } from '@gatehouse/core/crypto';
import type { Database } from '@gatehouse/core/db';
import { consoleSessions } from '@gatehouse/core/db/schema';
import { eq, lt, or } from 'drizzle-orm';

/**
 * The console's sign-in sessions. The admin token is presented once, at sign-in, and exchanged for a
 * random session id that the browser holds in an HttpOnly cookie; the token itself never reaches the
 * browser's storage. Sessions live in the database, so every API instance sharing it honours them and a
 * sign-out on one instance ends the session on all.
 *
 * The database holds only an HMAC of each id, under a key derived from the admin token: a dump yields no
 * id a browser could present, and changing the admin token leaves every session it signed unreachable
 * (revoked at once, the rows deleted when they expire). The CSRF token of a session is another HMAC of
 * its id, so it is never stored and every instance computes the same one.
 *
 * A session ends at sign-out, after `idleSeconds` without a request, or `absoluteSeconds` after sign-in,
 * whichever comes first. Every time is read from one clock (the API's, injectable for tests).
 */
export interface ConsoleSessionLimits {
  idleSeconds: number;
  absoluteSeconds: number;
}

export const CONSOLE_SESSION_LIMITS: ConsoleSessionLimits = {
  idleSeconds: 30 * 60,
  absoluteSeconds: 12 * 3600,
};

/** How stale `last_seen_at` may get before a request writes it again (one write a minute, not one a request). */
const TOUCH_AFTER_MS = 60_000;

export interface ConsoleSession {
  /** The id as the cookie holds it. */
  id: string;
  csrfToken: string;
  expiresAt: Date;
  idleExpiresAt: Date;
}

export class ConsoleSessions {
  readonly #db: Database;
  readonly #idKey: MacKey;
  readonly #csrfKey: MacKey;
  readonly #limits: ConsoleSessionLimits;
  readonly #now: () => number;

  constructor(
    db: Database,
    adminToken: string,
    limits: ConsoleSessionLimits = CONSOLE_SESSION_LIMITS,
    now: () => number = Date.now,
  ) {
    this.#db = db;
    const master = Buffer.from(adminToken, 'utf8');
    this.#idKey = macKey(deriveKey(master, 'console-session-id'));
    this.#csrfKey = macKey(deriveKey(master, 'console-session-csrf'));
    this.#limits = limits;
    this.#now = now;
  }

  get limits(): ConsoleSessionLimits {
    return this.#limits;
  }

  /** Opens a session (the caller has checked the admin token); sessions already over are deleted first. */
  async open(): Promise<ConsoleSession> {
    const now = this.#now();
    await this.#sweep(now);
    const id = `cs_${randomBytes(32).toString('base64url')}`;
    const expiresAt = new Date(now + this.#limits.absoluteSeconds * 1000);
    await this.#db.insert(consoleSessions).values({
      idHash: this.#hash(id),
      createdAt: new Date(now),
      lastSeenAt: new Date(now),
      expiresAt,
    });
    return this.#describe(id, new Date(now), expiresAt);
  }

  /** The live session `id` names, its idle clock restarted; undefined when unknown, signed out or over. */
  async find(id: string): Promise<ConsoleSession | undefined> {
    if (!/^cs_[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
    const now = this.#now();
    const idHash = this.#hash(id);
    const [row] = await this.#db.select().from(consoleSessions).where(eq(consoleSessions.idHash, idHash));
    if (!row) return undefined;
    const idleOver = row.lastSeenAt.getTime() + this.#limits.idleSeconds * 1000 <= now;
    if (idleOver || row.expiresAt.getTime() <= now) {
      await this.#db.delete(consoleSessions).where(eq(consoleSessions.idHash, idHash));
      return undefined;
    }
    let lastSeen = row.lastSeenAt;
    if (now - lastSeen.getTime() >= TOUCH_AFTER_MS) {
      lastSeen = new Date(now);
      await this.#db
        .update(consoleSessions)
        .set({ lastSeenAt: lastSeen })
        .where(eq(consoleSessions.idHash, idHash));
    }
    return this.#describe(id, lastSeen, row.expiresAt);
  }

  /** Ends the session `id` names, on every instance. */
  async revoke(id: string): Promise<void> {
    await this.#db.delete(consoleSessions).where(eq(consoleSessions.idHash, this.#hash(id)));
  }

  /** Whether `presented` is the CSRF token of session `id`, compared in constant time. */
  csrfMatches(id: string, presented: string): boolean {
    return presented !== '' && constantTimeEqual(presented, this.#csrf(id));
  }

  #describe(id: string, lastSeen: Date, expiresAt: Date): ConsoleSession {
    const idle = new Date(lastSeen.getTime() + this.#limits.idleSeconds * 1000);
    return {
      id,
      csrfToken: this.#csrf(id),
      expiresAt,
      idleExpiresAt: idle < expiresAt ? idle : expiresAt,
    };
  }

  #hash(id: string): string {
    return hmac(this.#idKey, id).toString('hex');
  }

  #csrf(id: string): string {
    return hmac(this.#csrfKey, id).toString('base64url');
  }

  async #sweep(now: number): Promise<void> {
    await this.#db
      .delete(consoleSessions)
      .where(
        or(
          lt(consoleSessions.expiresAt, new Date(now)),
          lt(consoleSessions.lastSeenAt, new Date(now - this.#limits.idleSeconds * 1000)),
        ),
      );
  }
}
