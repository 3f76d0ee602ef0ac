import { randomUUID } from 'node:crypto';
import { type SolveRoute, solveChallenge } from '@gatehouse/node/headless';
import { ACTION, type BackendAnswer, submitForm } from './backend.ts';

/**
 * A steady stream of end users: each one solves a challenge with the headless client (the widget's
 * protocol, with its continuity) and posts the token to the protected backend. An end user whose form
 * comes back "verification unavailable" (503: the backend's SDK got no verdict, which happens to a `pt_`
 * token caught in flight by the crash) tries again, as a person would, up to three times.
 */

/** One token minted for an end user, and what the backend made of it. */
export interface Minted {
  token: string;
  route: SolveRoute;
  mintedAt: number;
  /** The idempotency key the backend validated it with (reused when a stranded token is checked later). */
  idempotencyKey: string;
  answeredAt: number;
  answer: BackendAnswer;
}

/** One end user's verification: one or more attempts, accepted or failed. */
export interface Verification {
  user: number;
  startedAt: number;
  attempts: Minted[];
  accepted: boolean;
  /** Why it failed: the last refusal, a client-only token, or a thrown error. */
  failure: string | null;
}

export interface StreamOptions {
  mainUrl: string;
  backendUrl: string;
  appKey: string;
  users: number;
  /** Pause between one end user's verifications. */
  pauseMs: number;
}

export class VerificationStream {
  readonly verifications: Verification[] = [];
  readonly #options: StreamOptions;
  #running = false;
  #workers: Promise<void>[] = [];

  constructor(options: StreamOptions) {
    this.#options = options;
  }

  start(): void {
    this.#running = true;
    for (let user = 0; user < this.#options.users; user++) this.#workers.push(this.#loop(user));
  }

  /** Lets verifications in flight finish, then resolves. */
  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#workers);
  }

  /** Every token minted, in the order the backend answered. */
  get minted(): Minted[] {
    return this.verifications.flatMap((v) => v.attempts).sort((a, b) => a.answeredAt - b.answeredAt);
  }

  async #loop(user: number): Promise<void> {
    while (this.#running) {
      this.verifications.push(await this.#verify(user));
      await new Promise((r) => setTimeout(r, this.#options.pauseMs));
    }
  }

  async #verify(user: number): Promise<Verification> {
    const v: Verification = { user, startedAt: Date.now(), attempts: [], accepted: false, failure: null };
    for (let attempt = 0; attempt < 3; attempt++) {
      let solved: Awaited<ReturnType<typeof solveChallenge>>;
      try {
        solved = await solveChallenge({
          baseUrl: this.#options.mainUrl,
          appKey: this.#options.appKey,
          action: ACTION,
          timeoutMs: 2000,
        });
      } catch (error) {
        v.failure = `solve threw: ${String(error)}`;
        return v;
      }
      const mintedAt = Date.now();
      const idempotencyKey = `drill-${randomUUID()}`;
      const answer = await submitForm(this.#options.backendUrl, solved.passToken, idempotencyKey);
      v.attempts.push({
        token: solved.passToken,
        route: solved.route,
        mintedAt,
        idempotencyKey,
        answeredAt: Date.now(),
        answer,
      });
      if (answer.accepted) {
        v.accepted = true;
        v.failure = null;
        return v;
      }
      v.failure = answer.error ?? `refused: ${JSON.stringify(answer.verdict)} (route ${solved.route})`;
      // Only "no verdict could be had" is worth another try; a refusal is final.
      if (answer.status !== 503) return v;
    }
    return v;
  }
}
