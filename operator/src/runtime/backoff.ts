/** Exponential backoff settings: the first retry waits `baseMs`, each next one `factor` times more, at most `maxMs`. */
export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
  factor?: number;
  /** Fraction of the delay drawn at random (0 to 1): 0.2 spreads a 1 s delay over 0.8 to 1.2 s. */
  jitter?: number;
}

/** The delay before retry number `attempt` (0-based); never above `maxMs`, never below zero. */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions,
  random: () => number = Math.random,
): number {
  const factor = options.factor ?? 2;
  const raw = Math.min(options.maxMs, options.baseMs * factor ** Math.max(0, attempt));
  const jitter = options.jitter ?? 0;
  const spread = raw * jitter * (random() * 2 - 1);
  return Math.max(0, Math.min(options.maxMs, Math.round(raw + spread)));
}

/** Per-key failure counts: each key backs off on its own, and a success (`forget`) resets it. */
export class KeyedBackoff {
  readonly #failures = new Map<string, number>();
  readonly #options: BackoffOptions;
  readonly #random: () => number;

  constructor(options: BackoffOptions, random: () => number = Math.random) {
    this.#options = options;
    this.#random = random;
  }

  /** Records a failure of `key` and returns how long to wait before its next try. */
  next(key: string): number {
    const attempt = this.#failures.get(key) ?? 0;
    this.#failures.set(key, attempt + 1);
    return backoffDelay(attempt, this.#options, this.#random);
  }

  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
