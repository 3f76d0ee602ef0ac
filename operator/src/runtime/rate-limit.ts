/**
 * A token bucket, as client-go's flowcontrol limiter: `qps` tokens a second, at most `burst` saved up;
 * each request to the apiserver takes one, waiting for it when none is left. The controllers of one
 * leadership term share one bucket, so however many Apps change at once (a new leader's first pass, a
 * resync) the apiserver sees at most `burst` requests at once and `qps` a second after that.
 */
export class TokenBucket {
  readonly #qps: number;
  readonly #burst: number;
  #tokens: number;
  #at: number;
  #queue: Promise<void> = Promise.resolve();

  constructor(qps: number, burst: number, now = () => performance.now()) {
    this.#qps = qps;
    this.#burst = burst;
    this.#tokens = burst;
    this.#now = now;
    this.#at = now();
  }
  readonly #now: () => number;

  /** Resolves once a token is taken; callers are served in order. Rejects only through `signal`. */
  take(signal?: AbortSignal): Promise<void> {
    const turn = this.#queue.then(() => this.#wait(signal));
    this.#queue = turn.catch(() => undefined);
    return turn;
  }

  async #wait(signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const now = this.#now();
      this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#at) / 1000) * this.#qps);
      this.#at = now;
      if (this.#tokens >= 1) {
        this.#tokens -= 1;
        return;
      }
      const ms = Math.ceil(((1 - this.#tokens) / this.#qps) * 1000);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, ms);
        signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            reject(signal.reason);
          },
          { once: true },
        );
      });
    }
  }
}
