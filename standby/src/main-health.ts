import { EventEmitter } from 'node:events';

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
 * What the standby believes about the main API, from its own probes of `/readyz` with hysteresis (a
 * single lost probe neither starts nor ends an outage), unless the operator has set a mode. It starts
 * `up`: a standby that has not yet seen an outage must not take traffic.
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

  constructor(mainApiUrl: string, settings: ProbeSettings) {
    super();
    this.#url = `${mainApiUrl}/readyz`;
    this.#settings = settings;
  }

  /** True when standby endpoints should serve instead of answering `service_online`. */
  get serving(): boolean {
    return this.#mode === 'serve' || (this.#mode === 'auto' && this.#state === 'down');
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
    this.emit('change', state);
  }
}
