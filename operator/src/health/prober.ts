export interface ProbeSettings {
  intervalMs: number;
  timeoutMs: number;
  /** Consecutive failures before a healthy (or not yet judged) main API counts as down. */
  failAfter: number;
  /** Consecutive successes before a down main API counts as healthy again. */
  recoverAfter: number;
  /**
   * Flap damping: a region that goes down again within `flapWindowMs` of recovering is flapping, and
   * its next recovery also needs `flapHoldMs` of unbroken successes. Defaults: 60 s and 30 s.
   */
  flapWindowMs?: number;
  flapHoldMs?: number;
}

export const FLAP_DEFAULTS = { flapWindowMs: 60_000, flapHoldMs: 30_000 };

/** One probe: true when `GET <baseUrl>/readyz` answers 2xx within the timeout. Injectable for tests. */
export type ProbeFn = (baseUrl: string, timeoutMs: number) => Promise<boolean>;

/**
 * A probe whose connection fails before any answer (refused, reset, closed) is tried once more at once,
 * within the same timeout: a Service or load balancer can still send a new connection to an instance that
 * has just stopped listening (a pod deleted in a rolling update) while other instances serve, and that is
 * not the region being down. An answer, whatever its status, and a timeout are the verdict as they come.
 */
export const httpProbe: ProbeFn = async (baseUrl, timeoutMs) => {
  const url = `${baseUrl.replace(/\/+$/, '')}/readyz`;
  const signal = AbortSignal.timeout(timeoutMs);
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(url, { signal });
      await res.body?.cancel();
      return res.ok;
    } catch {
      if (signal.aborted || attempt === 2) return false;
    }
  }
};

export interface RegionHealth {
  /** undefined until the first verdict: one success, or `failAfter` failures. */
  healthy: boolean | undefined;
  lastProbeAt: Date | undefined;
  /** Consecutive failures (or successes) so far, for messages. */
  failures: number;
  successes: number;
  /** True while the region is flapping: its recovery waits for flapHoldMs of good probes. */
  damped?: boolean;
}

interface Target extends RegionHealth {
  damped: boolean;
  url: string;
  /** When the current run of successes began, and when the region last came back up after an outage. */
  upSince: number | undefined;
  recoveredAt: number | undefined;
  /** Whether the region has been healthy since it was first probed. */
  everHealthy: boolean;
  timer: NodeJS.Timeout | undefined;
  stopped: boolean;
}

/**
 * Probes every region's main API from the operator, each on its own timer, one probe every `intervalMs`
 * (a probe that hangs until its timeout does not stretch the cadence), with hysteresis: one lost probe
 * changes nothing; `failAfter` in a row mark the region down, `recoverAfter` in a row mark it up.
 * Damping acts on the way back only, so every outage is still detected within `failAfter` probes: a
 * region that fails again within `flapWindowMs` of recovering stays down until it has answered for
 * `flapHoldMs` without a miss (traffic stays on the standby while the main API flaps).
 * `onChange(appKey)` fires when a region's verdict changes, so the App is reconciled at once.
 */
export class MainApiProber {
  readonly #targets = new Map<string, Map<string, Target>>();
  readonly #settings: ProbeSettings;
  readonly #probe: ProbeFn;
  readonly #onChange: (appKey: string, region: string, healthy: boolean) => void;
  readonly #onResult: (ok: boolean) => void;

  constructor(
    settings: ProbeSettings,
    onChange: (appKey: string, region: string, healthy: boolean) => void,
    options: { probe?: ProbeFn; onResult?: (ok: boolean) => void } = {},
  ) {
    this.#settings = settings;
    this.#onChange = onChange;
    this.#probe = options.probe ?? httpProbe;
    this.#onResult = options.onResult ?? (() => {});
  }

  /** Makes the probed regions of `appKey` exactly `regions` (a changed URL starts over). */
  sync(appKey: string, regions: { name: string; url: string }[]): void {
    const current = this.#targets.get(appKey) ?? new Map<string, Target>();
    this.#targets.set(appKey, current);
    const wanted = new Map(regions.map((r) => [r.name, r.url]));
    for (const [name, target] of current) {
      if (wanted.get(name) !== target.url) {
        this.#stopTarget(target);
        current.delete(name);
      }
    }
    for (const [name, url] of wanted) {
      if (current.has(name)) continue;
      const target: Target = {
        url,
        healthy: undefined,
        lastProbeAt: undefined,
        failures: 0,
        successes: 0,
        damped: false,
        upSince: undefined,
        recoveredAt: undefined,
        everHealthy: false,
        timer: undefined,
        stopped: false,
      };
      current.set(name, target);
      this.#schedule(appKey, name, target, 0);
    }
  }

  health(appKey: string, region: string): RegionHealth | undefined {
    const t = this.#targets.get(appKey)?.get(region);
    return (
      t && {
        healthy: t.healthy,
        lastProbeAt: t.lastProbeAt,
        failures: t.failures,
        successes: t.successes,
        damped: t.damped,
      }
    );
  }

  forget(appKey: string): void {
    for (const target of this.#targets.get(appKey)?.values() ?? []) this.#stopTarget(target);
    this.#targets.delete(appKey);
  }

  stop(): void {
    for (const appKey of [...this.#targets.keys()]) this.forget(appKey);
  }

  #schedule(appKey: string, region: string, target: Target, delay: number) {
    target.timer = setTimeout(async () => {
      const started = Date.now();
      const ok = await this.#probe(target.url, this.#settings.timeoutMs);
      if (target.stopped) return;
      this.#record(appKey, region, target, ok);
      const elapsed = Date.now() - started;
      this.#schedule(appKey, region, target, Math.max(0, this.#settings.intervalMs - elapsed));
    }, delay);
    target.timer.unref();
  }

  #record(appKey: string, region: string, target: Target, ok: boolean) {
    this.#onResult(ok);
    const now = Date.now();
    const { flapWindowMs, flapHoldMs } = { ...FLAP_DEFAULTS, ...this.#settings };
    target.lastProbeAt = new Date(now);
    if (ok) {
      if (target.successes === 0) target.upSince = now;
      target.failures = 0;
      target.successes += 1;
    } else {
      target.successes = 0;
      target.failures += 1;
    }
    const before = target.healthy;
    // 1. Back up: recoverAfter good probes in a row, and while flapping, flapHoldMs of them.
    const held = !target.damped || now - (target.upSince ?? now) >= flapHoldMs;
    if (
      ok &&
      (before === undefined || (before === false && target.successes >= this.#settings.recoverAfter && held))
    ) {
      target.healthy = true;
      // A region coming up for the first time (an App's pods starting while the probes already run) has
      // not recovered from an outage: its next outage is not taken for flapping.
      if (before === false && target.everHealthy) target.recoveredAt = now;
      target.everHealthy = true;
      target.damped = false;
    }
    // 2. Down: failAfter failed probes in a row, always (damping never delays a switch to the standby).
    if (!ok && before !== false && target.failures >= this.#settings.failAfter) {
      target.healthy = false;
      target.damped = target.recoveredAt !== undefined && now - target.recoveredAt < flapWindowMs;
    }
    if (target.healthy !== before && target.healthy !== undefined)
      this.#onChange(appKey, region, target.healthy);
  }

  #stopTarget(target: Target) {
    target.stopped = true;
    clearTimeout(target.timer);
  }
}
