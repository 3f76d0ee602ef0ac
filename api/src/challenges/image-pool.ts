import { Worker } from 'node:worker_threads';
import type { ChallengeAnswer, ChallengeKind } from '@gatehouse/core/challenges';
import { z } from 'zod';

/** One drawn image challenge, ready to seal and send: what `makeImage` returns. */
export type DrawnImage = { kind: ChallengeKind; view: unknown; answer: ChallengeAnswer };
export type Draw = (kind: ChallengeKind) => Promise<DrawnImage>;

export type ImagePoolOptions = {
  kinds: readonly ChallengeKind[];
  /** Challenges kept ready per kind: the memory bound (each is ~10-40 KB of base64 images). */
  perKind: number;
  /** Draws off the request path (worker threads in production). */
  render: Draw;
  /**
   * Draws on the request when the pool of a kind is empty and `waiting` is 0 (no worker threads to wait
   * for: IMAGE_POOL_WORKERS=0 style set-ups and tests). With waiting > 0 it is never called.
   */
  inline: Draw;
  /**
   * Takes that may wait for a render in flight when their kind is empty, over all kinds; a take beyond them
   * is shed (PoolEmpty, which the API answers 503 with Retry-After). 0: draw inline instead, on the request.
   */
  waiting?: number;
  /** How long a waiting take waits before it is shed. */
  waitMs?: number;
  /**
   * Renders in flight at once, bounded so refills never queue unboundedly: RENDERS_PER_WORKER per worker
   * thread in production.
   */
  concurrency: number;
  /** Pause after a failed render before refilling again (no hot loop when drawing is broken). */
  retryMs?: number;
};

export type ImagePoolStats = {
  served: number;
  inline: number;
  rendered: number;
  failed: number;
  waited: number;
  shed: number;
};

/** No challenge of the kind is ready and too many takes already wait for one: the caller sheds the request. */
export class PoolEmpty extends Error {
  readonly kind: ChallengeKind;
  constructor(kind: ChallengeKind) {
    super(`no ${kind} challenge ready`);
    this.kind = kind;
  }
}

type Waiter = { resolve: (image: DrawnImage) => void; reject: (error: Error) => void; timer: NodeJS.Timeout };

/**
 * A bounded pool of unique, pre-drawn image challenges per kind. `take` removes what it returns, so a
 * challenge is served at most once; each take starts a background refill. Nothing is ever reused. When a
 * kind is empty, a take waits for the next render of that kind (a bounded number of takes, for a bounded
 * time) and beyond that is shed: drawing never lands on the event loop, so a flood of image inits costs the
 * requests behind it a pop and a seal, and whatever the workers can draw is what is served (issue 14).
 */
export class ImagePool {
  readonly #ready = new Map<ChallengeKind, DrawnImage[]>();
  readonly #pending = new Map<ChallengeKind, number>();
  readonly #waiters = new Map<ChallengeKind, Waiter[]>();
  #waitingCount = 0;
  #inFlight = 0;
  #closed = false;
  #pausedUntil = 0;
  #timer: NodeJS.Timeout | undefined;
  readonly stats: ImagePoolStats = { served: 0, inline: 0, rendered: 0, failed: 0, waited: 0, shed: 0 };
  readonly options: ImagePoolOptions;

  constructor(options: ImagePoolOptions) {
    this.options = options;
    for (const kind of options.kinds) {
      this.#ready.set(kind, []);
      this.#pending.set(kind, 0);
      this.#waiters.set(kind, []);
    }
  }

  /** Starts filling every kind in the background. */
  start(): this {
    this.#refill();
    return this;
  }

  /** Challenges ready now for a kind. */
  size(kind: ChallengeKind): number {
    return this.#ready.get(kind)?.length ?? 0;
  }

  async take(kind: ChallengeKind): Promise<DrawnImage> {
    const image = this.#ready.get(kind)?.shift();
    this.#refill();
    if (image) {
      this.stats.served++;
      return image;
    }
    const waiting = this.options.waiting ?? 0;
    if (waiting === 0) {
      this.stats.inline++;
      return this.options.inline(kind);
    }
    if (this.#waitingCount >= waiting) {
      this.stats.shed++;
      throw new PoolEmpty(kind);
    }
    this.#waitingCount++;
    const promise = new Promise<DrawnImage>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#dropWaiter(kind, waiter);
          this.stats.shed++;
          reject(new PoolEmpty(kind));
        }, this.options.waitMs ?? 2000),
      };
      this.#waiters.get(kind)?.push(waiter);
    });
    this.#refill();
    return promise;
  }

  #dropWaiter(kind: ChallengeKind, waiter: Waiter): void {
    const queue = this.#waiters.get(kind) ?? [];
    const index = queue.indexOf(waiter);
    if (index >= 0) {
      queue.splice(index, 1);
      this.#waitingCount--;
    }
  }

  /** A fresh render goes to the longest-waiting take of its kind, else into the pool. */
  #deliver(kind: ChallengeKind, image: DrawnImage): void {
    const waiter = this.#waiters.get(kind)?.shift();
    if (!waiter) {
      this.#ready.get(kind)?.push(image);
      return;
    }
    this.#waitingCount--;
    clearTimeout(waiter.timer);
    this.stats.waited++;
    waiter.resolve(image);
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    for (const queue of this.#ready.values()) queue.length = 0;
    for (const [kind, queue] of this.#waiters) {
      for (const waiter of queue.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.reject(new PoolEmpty(kind));
      }
    }
    this.#waitingCount = 0;
  }

  /**
   * The kind furthest from full (ready + being drawn − takes waiting for it), or undefined when every kind
   * is full.
   */
  #neediest(): ChallengeKind | undefined {
    let best: ChallengeKind | undefined;
    let bestHave = this.options.perKind;
    for (const kind of this.options.kinds) {
      const have =
        (this.#ready.get(kind)?.length ?? 0) +
        (this.#pending.get(kind) ?? 0) -
        (this.#waiters.get(kind)?.length ?? 0);
      if (have < bestHave) [best, bestHave] = [kind, have];
    }
    return best;
  }

  #refill(): void {
    if (this.#closed) return;
    const wait = this.#pausedUntil - Date.now();
    if (wait > 0) {
      this.#timer ??= setTimeout(() => {
        this.#timer = undefined;
        this.#refill();
      }, wait).unref();
      return;
    }
    while (this.#inFlight < this.options.concurrency) {
      const kind = this.#neediest();
      if (!kind) return;
      this.#inFlight++;
      this.#pending.set(kind, (this.#pending.get(kind) ?? 0) + 1);
      this.options.render(kind).then(
        (image) => {
          this.#settle(kind);
          if (this.#closed) return;
          this.stats.rendered++;
          this.#deliver(kind, image);
          this.#refill();
        },
        () => {
          this.#settle(kind);
          this.stats.failed++;
          this.#pausedUntil = Date.now() + (this.options.retryMs ?? 1000);
          this.#refill();
        },
      );
    }
  }

  #settle(kind: ChallengeKind): void {
    this.#inFlight--;
    this.#pending.set(kind, (this.#pending.get(kind) ?? 1) - 1);
  }
}

/**
 * Renders handed to each worker thread at once: one drawing and one queued behind it, so a worker that
 * finishes starts the next challenge at once instead of idling until a busy event loop has taken its
 * result and posted the next request (under a flood of inits that round trip is what the loop is slowest
 * at). Two, not more: a render queued in a worker is one the pool cannot redirect to the kind in demand.
 */
export const RENDERS_PER_WORKER = 2;

type WorkerReply = { id: number; image?: DrawnImage; error?: string };

/**
 * Worker threads that draw challenges (`image-worker.ts`): canvas, fonts and encoding live there, off the
 * event loop. Each worker draws one challenge at a time; `draw` goes to the least busy one.
 */
export class ImageWorkers {
  readonly #workers: { worker: Worker; busy: number; ids: Set<number> }[] = [];
  readonly #waiting = new Map<number, { resolve: (i: DrawnImage) => void; reject: (e: Error) => void }>();
  #next = 0;
  #closed = false;

  constructor(count: number) {
    for (let i = 0; i < count; i++) this.#workers.push(this.#spawn());
  }

  /**
   * A worker thread; one that exits (a crash, say) fails its pending draws and is replaced, a second later
   * so that a worker failing at start-up cannot spin (the pool draws inline meanwhile).
   */
  #spawn(): { worker: Worker; busy: number; ids: Set<number> } {
    // Small semi-spaces, as the API process itself runs (api/Dockerfile): drawing makes short-lived garbage.
    const worker = new Worker(new URL('./image-worker.ts', import.meta.url), {
      resourceLimits: { maxYoungGenerationSizeMb: 24 },
    });
    // A pool that is filling never keeps the process alive.
    worker.unref();
    const slot = { worker, busy: 0, ids: new Set<number>() };
    worker.on('message', (reply: WorkerReply) => {
      slot.busy--;
      slot.ids.delete(reply.id);
      const waiting = this.#waiting.get(reply.id);
      this.#waiting.delete(reply.id);
      if (reply.image) waiting?.resolve(reply.image);
      else waiting?.reject(new Error(reply.error ?? 'image worker failed'));
    });
    worker.on('error', () => {});
    worker.on('exit', () => {
      for (const id of slot.ids) {
        this.#waiting.get(id)?.reject(new Error('image worker exited'));
        this.#waiting.delete(id);
      }
      setTimeout(() => {
        const index = this.#workers.indexOf(slot);
        if (index >= 0 && !this.#closed) this.#workers[index] = this.#spawn();
      }, 1000).unref();
    });
    return slot;
  }

  draw: Draw = (kind) => {
    const slot = this.#workers.reduce((a, b) => (b.busy < a.busy ? b : a));
    const id = this.#next++;
    slot.busy++;
    slot.ids.add(id);
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      slot.worker.postMessage({ id, kind });
    });
  };

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#workers.map((w) => w.worker.terminate()));
  }
}

const poolEnv = z.object({
  IMAGE_POOL_SIZE: z.coerce.number().int().min(0).max(256).default(8),
  IMAGE_POOL_WORKERS: z.coerce.number().int().min(1).max(16).default(1),
  IMAGE_POOL_WAITING: z.coerce.number().int().min(0).max(10_000).default(64),
});

/**
 * IMAGE_POOL_SIZE (challenges ready per kind; 0 draws every challenge inline), IMAGE_POOL_WORKERS and
 * IMAGE_POOL_WAITING (requests that may wait for a render when their kind is empty; beyond them, 503; 0 draws
 * inline on the request instead, as before the pool).
 */
export function imagePoolSettings(env: NodeJS.ProcessEnv = process.env): {
  perKind: number;
  workers: number;
  waiting: number;
} {
  const parsed = poolEnv.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return {
    perKind: parsed.data.IMAGE_POOL_SIZE,
    workers: parsed.data.IMAGE_POOL_WORKERS,
    waiting: parsed.data.IMAGE_POOL_WAITING,
  };
}
