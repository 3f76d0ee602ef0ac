import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { ChallengeAnswer, ChallengeKind } from '@gatehouse/core/challenges';
import { z } from 'zod';

/** One drawn image challenge, ready to seal and send: what `makeImage` returns. */
export type DrawnImage = { kind: ChallengeKind; view: unknown; answer: ChallengeAnswer };
export type Draw = (kind: ChallengeKind) => Promise<DrawnImage>;

export type ImagePoolOptions = {
  kinds: readonly ChallengeKind[];
  /** Challenges kept ready per kind: the memory bound (each is ~10-40 KB of base64 images). */
  perKind: number;
  /** Draws off the request path (renderer processes in production: ImageWorkers). */
  render: Draw;
  /**
   * Draws on the request when the pool of a kind is empty and `waiting` is 0 (IMAGE_POOL_WAITING=0 set-ups
   * and tests; it loads the canvas in the calling process). With waiting > 0 it is never called.
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
   * Renders in flight at once, bounded so refills never queue unboundedly: RENDERS_PER_WORKER per renderer
   * process in production.
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
 * time) and beyond that is shed (at once while drawing fails): drawing never lands on the event loop, so a
 * flood of image inits costs the requests behind it a pop and a seal, and whatever the renderers can draw is
 * what is served.
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
    if (this.#waitingCount >= waiting || this.#nothingComing(kind)) {
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

  /**
   * Drawing is failing (the pool is pausing after a failed render: a renderer crashed or cannot start) and
   * no render of the kind in flight is left for this take: waiting would only hold the request until
   * `waitMs`, so it is shed at once.
   */
  #nothingComing(kind: ChallengeKind): boolean {
    if (this.#pausedUntil <= Date.now()) return false;
    return (this.#pending.get(kind) ?? 0) <= (this.#waiters.get(kind)?.length ?? 0);
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
 * Renders handed to each renderer process at once: one drawing and one queued behind it, so a renderer that
 * finishes starts the next challenge at once instead of idling until a busy event loop has taken its
 * result and sent the next request (under a flood of inits that round trip is what the loop is slowest
 * at). Two, not more: a render queued in a renderer is one the pool cannot redirect to the kind in demand.
 */
export const RENDERS_PER_WORKER = 2;

type WorkerReply = { id: number; image?: DrawnImage; error?: string };

type Slot = {
  child: ChildProcess | undefined;
  busy: number;
  ids: Set<number>;
  /** Consecutive exits without a render served in between: the restart backoff's exponent. */
  failures: number;
  restart: NodeJS.Timeout | undefined;
};

export type ImageWorkersOptions = {
  /** The renderer's entry (default: image-worker.ts beside this file, image-worker.js in the bundle). */
  entry?: string | URL;
  /** Node flags of each renderer process. */
  execArgv?: string[];
  /** First restart delay after a renderer exits; doubled for each exit in a row, up to `maxRestartMs`. */
  restartMs?: number;
  maxRestartMs?: number;
  /** A renderer's exit or restart, for the log. */
  onEvent?: (event: { type: 'exit' | 'start'; pid: number | undefined; detail: string }) => void;
};

/**
 * The renderer's Node flags and glibc's malloc arenas: 1 MiB semi-spaces (its garbage is short-lived and
 * small, so small semi-spaces keep its peak resident memory down for a CPU cost within noise), an old
 * generation of 128 MiB, far above its live heap (a renderer past it dies and is restarted, the API
 * untouched), and one malloc arena (Skia draws on the main thread). docs/decisions.md, "Runtime and API
 * memory".
 */
const RENDERER_FLAGS = ['--max-semi-space-size=1', '--max-old-space-size=128'];

/**
 * The renderer's environment: what a process needs to run and draw, never the API's configuration (database
 * and Redis URLs, secrets, tokens): drawing reads none of it, and a renderer's crash report or core dump
 * then holds none of it either. NODE_OPTIONS stays out so the renderer runs with its own flags.
 */
export function rendererEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const kept = Object.entries(env).filter(
    ([name]) =>
      ['PATH', 'HOME', 'TMPDIR', 'TZ', 'LANG', 'LC_ALL', 'NODE_ENV', 'LD_LIBRARY_PATH'].includes(name) ||
      /^(MALLOC_|FONTCONFIG_|LC_)/.test(name),
  );
  return { MALLOC_ARENA_MAX: '1', ...Object.fromEntries(kept) };
}

/**
 * Renderer processes that draw challenges (`image-worker.ts`, forked with an IPC channel in V8's structured
 * serialization): the canvas library, Skia, its caches and the encoders live there, so the API process
 * never loads them (as worker threads they would count in the API's own resident memory). Each renderer draws one
 * challenge at a time; `draw` goes to the least busy running one. One that exits (a crash, kill -9, out of
 * memory) fails its pending draws and is started again after a backoff (`restartMs` doubling up to
 * `maxRestartMs`, back to the start once a restarted one has served a render); meanwhile `draw` fails at
 * once and the pool sheds (ImagePool). A renderer exits when the API does, however it ended: its IPC
 * channel closes and it leaves on `disconnect`.
 */
export class ImageWorkers {
  readonly #slots: Slot[] = [];
  readonly #waiting = new Map<number, { resolve: (i: DrawnImage) => void; reject: (e: Error) => void }>();
  readonly #options: Required<Omit<ImageWorkersOptions, 'onEvent'>> & Pick<ImageWorkersOptions, 'onEvent'>;
  #next = 0;
  #closed = false;
  /** Renderer starts, the first ones included. */
  starts = 0;

  constructor(count: number, options: ImageWorkersOptions = {}) {
    this.#options = {
      entry: options.entry ?? new URL('./image-worker.ts', import.meta.url),
      execArgv: options.execArgv ?? RENDERER_FLAGS,
      restartMs: options.restartMs ?? 500,
      maxRestartMs: options.maxRestartMs ?? 30_000,
      onEvent: options.onEvent,
    };
    for (let i = 0; i < count; i++) {
      const slot: Slot = { child: undefined, busy: 0, ids: new Set(), failures: 0, restart: undefined };
      this.#slots.push(slot);
      this.#spawn(slot);
    }
  }

  /** The process ids of the renderers running now. */
  pids(): number[] {
    return this.#slots.flatMap((s) => (s.child?.pid === undefined ? [] : [s.child.pid]));
  }

  #spawn(slot: Slot): void {
    const entry = this.#options.entry;
    const child = fork(entry instanceof URL ? fileURLToPath(entry) : entry, [], {
      serialization: 'advanced',
      execArgv: this.#options.execArgv,
      env: rendererEnv(),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.starts++;
    slot.child = child;
    // A pool that is filling never keeps the API alive.
    child.unref();
    child.channel?.unref();
    this.#options.onEvent?.({ type: 'start', pid: child.pid, detail: `renderer ${this.starts}` });
    child.on('message', (reply: WorkerReply) => {
      if (!slot.ids.delete(reply.id)) return;
      slot.busy--;
      const waiting = this.#waiting.get(reply.id);
      this.#waiting.delete(reply.id);
      if (reply.image) {
        slot.failures = 0;
        waiting?.resolve(reply.image);
      } else waiting?.reject(new Error(reply.error ?? 'image renderer failed'));
    });
    // A failed fork or send: 'exit' follows (or already came), which is where the slot is cleaned up.
    child.on('error', () => {});
    child.once('exit', (code, signal) => {
      if (slot.child !== child) return;
      slot.child = undefined;
      this.#failPending(slot, 'image renderer exited');
      if (this.#closed) return;
      const delay = Math.min(this.#options.restartMs * 2 ** slot.failures, this.#options.maxRestartMs);
      slot.failures++;
      this.#options.onEvent?.({
        type: 'exit',
        pid: child.pid,
        detail: `exited (${signal ?? `code ${code}`}); restarting in ${delay} ms`,
      });
      slot.restart = setTimeout(() => {
        slot.restart = undefined;
        if (!this.#closed) this.#spawn(slot);
      }, delay).unref();
    });
  }

  #failPending(slot: Slot, message: string): void {
    for (const id of slot.ids) {
      this.#waiting.get(id)?.reject(new Error(message));
      this.#waiting.delete(id);
    }
    slot.ids.clear();
    slot.busy = 0;
  }

  draw: Draw = (kind) => {
    const running = this.#slots.filter((s) => s.child?.connected);
    if (running.length === 0) return Promise.reject(new Error('no image renderer running'));
    const slot = running.reduce((a, b) => (b.busy < a.busy ? b : a));
    const id = this.#next++;
    slot.busy++;
    slot.ids.add(id);
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      slot.child?.send({ id, kind }, (error) => {
        if (!error || !slot.ids.delete(id)) return;
        slot.busy--;
        this.#waiting.delete(id);
        reject(error);
      });
    });
  };

  /** Stops every renderer and waits until each has exited; pending draws fail. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(
      this.#slots.map(async (slot) => {
        clearTimeout(slot.restart);
        const child = slot.child;
        if (!child) return;
        this.#failPending(slot, 'image renderers closed');
        if (child.exitCode === null && child.signalCode === null) {
          const exited = once(child, 'exit');
          // Unreferenced (a filling pool never keeps the API alive), but one awaiting close() waits for it.
          child.ref();
          child.kill();
          await exited;
        }
      }),
    );
  }
}

const poolEnv = z.object({
  IMAGE_POOL_SIZE: z.coerce.number().int().min(0).max(256).default(8),
  IMAGE_POOL_WORKERS: z.coerce.number().int().min(1).max(16).default(1),
  IMAGE_POOL_WAITING: z.coerce.number().int().min(0).max(10_000).default(64),
});

/**
 * IMAGE_POOL_SIZE (challenges ready per kind; 0 draws every challenge inline), IMAGE_POOL_WORKERS (renderer
 * processes, each drawing one challenge at a time) and
 * IMAGE_POOL_WAITING (requests that may wait for a render when their kind is empty; beyond them, 503; 0 draws
 * inline on the request instead).
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
