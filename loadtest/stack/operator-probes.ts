import type { App } from '../../operator/src/api/v1alpha1/app-types.ts';
import { MainApiProber, type ProbeSettings } from '../../operator/src/health/prober.ts';
import { type StandbyMode, StandbySwitch } from '../../operator/src/health/standby-switch.ts';

/**
 * The operator's traffic loop (operator/src/controllers/steps/traffic.ts) for the local stack, with the
 * operator's own prober and standby switch and no Kubernetes: each region's main API (its proxy) is probed
 * with hysteresis; a region found down has both of its standby processes told to `serve`, again every
 * `reassertMs` while it lasts (as the operator re-asserts for restarted pods), and `auto` once it is back,
 * where the standby's own probes take over. In Kubernetes the region's standby URLs come from its
 * EndpointSlices; here they are the stack's ports.
 */
export interface OperatorRegion {
  name: string;
  api: string;
  standbys: string[];
}

/** StandbySwitch passes the App through to its targets function, which here needs only the region. */
const STACK_APP = { metadata: { name: 'stack', namespace: 'local' } } as unknown as App;
const APP_KEY = 'local/stack';

export class OperatorProbes {
  readonly #regions: Map<string, OperatorRegion>;
  readonly #prober: MainApiProber;
  readonly #switch: StandbySwitch;
  readonly #modes = new Map<string, StandbyMode>();
  readonly #log: (line: string) => void;
  readonly #reassert: NodeJS.Timeout;

  constructor(options: {
    regions: OperatorRegion[];
    token: string;
    settings: ProbeSettings;
    reassertMs: number;
    log: (line: string) => void;
  }) {
    this.#regions = new Map(options.regions.map((r) => [r.name, r]));
    this.#log = options.log;
    this.#switch = new StandbySwitch({
      token: options.token,
      targets: async (_app, region) => this.#regions.get(region)?.standbys ?? [],
    });
    this.#prober = new MainApiProber(options.settings, (_app, region, healthy) => {
      // A region's first verdict, healthy, is the start: its standbys are in `auto` already.
      if (healthy && !this.#modes.has(region)) this.#modes.set(region, 'auto');
      else
        void this.#set(
          region,
          healthy ? 'auto' : 'serve',
          healthy ? 'main API healthy again' : 'main API down',
        );
    });
    this.#prober.sync(
      APP_KEY,
      options.regions.map((r) => ({ name: r.name, url: r.api })),
    );
    this.#reassert = setInterval(() => {
      for (const [region, mode] of this.#modes) if (mode === 'serve') void this.#set(region, 'serve');
    }, options.reassertMs);
    this.#reassert.unref();
  }

  async #set(region: string, mode: StandbyMode, why?: string): Promise<void> {
    this.#modes.set(region, mode);
    const result = await this.#switch.setMode(STACK_APP, region, mode);
    if (why || result.errors.length > 0) {
      const errors = result.errors.length ? `; ${result.errors.join('; ')}` : '';
      this.#log(
        `operator: ${region} ${why ?? 'standby mode re-asserted'}: standbys told to ${mode} ` +
          `(${result.acknowledged}/${result.total} acknowledged${errors})`,
      );
    }
  }

  /** Per region: the operator's verdict on its main API and the mode it last gave the standbys. */
  status(): Record<string, { healthy: boolean | undefined; failures: number; standbyMode: StandbyMode }> {
    return Object.fromEntries(
      [...this.#regions.keys()].map((name) => {
        const health = this.#prober.health(APP_KEY, name);
        return [
          name,
          {
            healthy: health?.healthy,
            failures: health?.failures ?? 0,
            standbyMode: this.#modes.get(name) ?? 'auto',
          },
        ];
      }),
    );
  }

  stop(): void {
    clearInterval(this.#reassert);
    this.#prober.stop();
  }
}
