import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import type { OutageBoard } from './outage-board.ts';

export type MainState = 'up' | 'down';
/** `auto`: follow the probes. `serve` / `online`: the operator decided (Kubernetes health probes). */
export type Mode = 'auto' | 'serve' | 'online';

export interface ProbeSettings {
  intervalMs: number;
  timeoutMs: number;
  /** Consecutive failed probes before the main API counts as down. */
  failAfter: number;
  /** Consecutive good probes before it counts as up again. */
  recoverAfter: number;
}

/**
 * Where a process records the windows in which it served (`core/src/offline-trust.ts`): the checkers of
 * `offline_` tokens accept only those minted inside one. `untilMs` is projected a few probes ahead while
 * the window is open (a crashed process's window closes on its own), and set to the last moment on close.
 */
export type OutageRecorder = (by: string, startMs: number, untilMs: number) => Promise<void>;

/** How long a refused request waits for the outage board before answering `service_online` anyway. */
const BOARD_READ_TIMEOUT_MS = 250;

/**
 * What the standby believes about the main API, from its own probes of `/readyz` with hysteresis (a
 * single lost probe neither starts nor ends an outage), unless the operator has set a mode. It starts
 * `up`: a standby that has not yet seen an outage must not take traffic. While its own probes see the
 * main API down it declares so on the outage board, and in `auto` mode it also serves while a peer's
 * declaration is fresh (`servingNow`), so all the processes probing one main API agree within a request.
 */
export class MainHealth extends EventEmitter<{ change: [MainState] }> {
  #state: MainState = 'up';
  #mode: Mode = 'auto';
  #fails = 0;
  #goods = 0;
  #lastProbeAt: Date | null = null;
  #timer: NodeJS.Timeout | undefined;
  readonly #url: string;
  readonly #settings: ProbeSettings;
  readonly #board: OutageBoard | undefined;
  readonly #recorder: OutageRecorder | undefined;
  /** When this process started serving, while it does. */
  #windowStart: number | undefined;
  /** This process on the board (host and pid for whoever reads the store; the UUID keeps it unique). */
  readonly #boardId = `${hostname()}:${process.pid}:${randomUUID()}`;

  constructor(mainApiUrl: string, settings: ProbeSettings, board?: OutageBoard, recorder?: OutageRecorder) {
    super();
    this.#url = `${mainApiUrl}/readyz`;
    this.#settings = settings;
    this.#board = board;
    this.#recorder = recorder;
  }

  /** True when this process's own view (the operator's mode, else its probes) says serve. */
  get serving(): boolean {
    return this.#mode === 'serve' || (this.#mode === 'auto' && this.#state === 'down');
  }

  /**
   * Whether a request should be served now: this process's own view, or, in `auto` mode, a fresh
   * declaration by a peer. The board is read only on the way to refusing; when it cannot be read in
   * time the answer is the process's own view (`service_online`), as before the board existed.
   */
  async servingNow(): Promise<boolean> {
    if (this.serving) return true;
    if (this.#mode !== 'auto' || !this.#board) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(resolve, BOARD_READ_TIMEOUT_MS, false);
    });
    try {
      return await Promise.race([this.#board.declared().catch(() => false), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  status() {
    return {
      main: this.#state,
      mode: this.#mode,
      serving: this.serving,
      last_probe_at: this.#lastProbeAt?.toISOString() ?? null,
    };
  }

  setMode(mode: Mode): void {
    this.#mode = mode;
    this.#recordWindow();
  }

  /** Records one probe result, applying the hysteresis. */
  record(ok: boolean): void {
    this.#lastProbeAt = new Date();
    if (ok) {
      this.#fails = 0;
      this.#goods += 1;
      if (this.#state === 'down' && this.#goods >= this.#settings.recoverAfter) this.#flip('up');
    } else {
      this.#goods = 0;
      this.#fails += 1;
      if (this.#state === 'up' && this.#fails >= this.#settings.failAfter) this.#flip('down');
    }
    // Refreshed on every failed probe while the outage lasts (a crashed process's lapses on its own),
    // withdrawn on recovery. Not under the operator's `online`: it has judged the main API up. A board
    // that cannot be written leaves peers to their own probes.
    if (this.#state === 'down' && this.#mode !== 'online' && this.#board) {
      const { intervalMs, timeoutMs } = this.#settings;
      this.#board.declare(this.#boardId, 3 * (intervalMs + timeoutMs)).catch(() => {});
    }
    this.#recordWindow();
  }

  /**
   * Opens, extends or closes this process's outage window, whatever made it serve (its probes or the
   * operator's `serve`). A write that fails is retried at the next probe; until then the tokens minted
   * may be refused, never wrongly accepted.
   */
  #recordWindow(): void {
    if (!this.#recorder) return;
    const now = Date.now();
    if (this.serving) {
      this.#windowStart ??= now;
      const { intervalMs, timeoutMs } = this.#settings;
      this.#recorder(this.#boardId, this.#windowStart, now + 3 * (intervalMs + timeoutMs)).catch(() => {});
    } else if (this.#windowStart !== undefined) {
      this.#recorder(this.#boardId, this.#windowStart, now).catch(() => {});
      this.#windowStart = undefined;
    }
  }

  async probeOnce(): Promise<boolean> {
    try {
      const res = await fetch(this.#url, { signal: AbortSignal.timeout(this.#settings.timeoutMs) });
      await res.body?.cancel();
      return res.ok;
    } catch {
      return false;
    }
  }

  start(): void {
    const tick = async () => {
      this.record(await this.probeOnce());
      this.#timer = setTimeout(tick, this.#settings.intervalMs);
      this.#timer.unref();
    };
    void tick();
  }

  stop(): void {
    clearTimeout(this.#timer);
  }

  #flip(state: MainState) {
    this.#state = state;
    this.#recordWindow();
    if (state === 'up') this.#board?.withdraw(this.#boardId).catch(() => {});
    this.emit('change', state);
  }
}
