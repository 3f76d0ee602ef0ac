/**
 * Carries out the failover rules (failover.ts) for one widget: each challenge initialization goes to the
 * main API first, then to the standby hosts, and the answer's submission goes where the challenge came
 * from. What the page learnt (the main API failed lately, which standby host answered) is shared by the
 * widgets of the page.
 */
import type { OfflineInitAnswer } from '@gatehouse/core/challenges/wire';
import {
  type Attempt,
  bypassOrder,
  correctMain,
  judge,
  nextTarget,
  SUSPECT_MS,
  TIMEOUTS,
} from './failover.ts';
import { discover, standbyHosts } from './standby-hosts.ts';
import { GatehouseError, post, trimBase } from './transport.ts';

export interface RouteOptions {
  apiServer: string;
  /** Hand-given standby hosts: used for failover only, instead of the deployment's list. */
  bypassServers?: string[];
  /** The origin gatehouse.js came from: where a misdirected apiServer should have pointed. */
  loaderOrigin: string;
}

/** An initialization's answer and the host that gave it, or: nothing reachable, complete client-side. */
export type Initialised<T> = { data: T; base: string; standby: boolean } | { clientOnly: true };

interface PageState {
  mainFailedAt?: number;
  lastGood?: string;
}
const states = new Map<string, PageState>();
const warned = new Set<string>();

const SETTING =
  'options.apiServer (data-gatehouse-api-server) names a standby host: set it to the main API\u2019s URL ' +
  '(the widget finds the standby hosts itself).';

function warnOnce(key: string, message: string, level: 'warn' | 'error' = 'warn'): void {
  if (warned.has(key)) return;
  warned.add(key);
  console[level](`Gatehouse: ${message}`);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

export class Route {
  private main: string;
  private options: RouteOptions;

  constructor(options: RouteOptions) {
    this.options = options;
    this.main = trimBase(options.apiServer);
  }

  private state(): PageState {
    const state = states.get(this.main) ?? {};
    states.set(this.main, state);
    return state;
  }

  /** POST /v1/challenge/init on the first host that answers, by the rules of failover.ts. */
  async init<T>(body: unknown, signal: AbortSignal): Promise<Initialised<T>> {
    const { hosts, source } = standbyHosts(this.main, this.options.bypassServers);
    const state = this.state();
    const input = {
      main: this.main,
      bypass: bypassOrder(hosts, state.lastGood),
      correctMain: correctMain(this.main, this.options.loaderOrigin, hosts),
      mainSuspect: state.mainFailedAt !== undefined && Date.now() - state.mainFailedAt < SUSPECT_MS,
    };
    const attempts: Attempt[] = [];
    let lastError: unknown;
    for (;;) {
      const target = nextTarget(input, attempts);
      if (target === 'client-only') {
        warnOnce(
          'co',
          'main API and standby hosts unreachable: a client-only co_ token (valid on no server).',
        );
        return { clientOnly: true };
      }
      if (target === 'misdirected') {
        const e = lastError as GatehouseError;
        throw new GatehouseError('service_online', `${e.message} ${SETTING}`, e.status);
      }
      if (target.delayMs) await sleep(target.delayMs, signal);
      try {
        const data = await post<T>(target.base, '/v1/challenge/init', body, signal, target.timeoutMs);
        if (target.kind === 'main') {
          if (target.base !== this.main) {
            // The corrected base worked: keep it for this widget.
            this.main = target.base;
          }
          this.state().mainFailedAt = undefined;
          if ((data as Partial<OfflineInitAnswer> | null)?.offline)
            warnOnce('offline', `${target.base} is a standby host. ${SETTING}`);
          void discover(this.main, source);
        } else {
          this.state().lastGood = target.base;
        }
        return { data, base: target.base, standby: target.kind === 'bypass' };
      } catch (error) {
        const verdict = judge(error);
        if (verdict === 'answer' || signal.aborted) throw error;
        lastError = error;
        attempts.push({ target, verdict });
        if (target.kind === 'main' && verdict === 'online') {
          const fix = input.correctMain ? ` Retrying with ${input.correctMain}.` : '';
          warnOnce(
            `online:${target.base}`,
            `${target.base} answered service_online. ${SETTING}${fix}`,
            'error',
          );
        } else if (target.kind === 'bypass' && verdict === 'online' && source === 'option') {
          warnOnce(
            'option',
            `standby host ${target.base} says the main API is up, yet it failed from here; without options.bypassServers the widget finds its standby hosts itself.`,
          );
        }
        this.noteFailure(target.base, verdict);
      }
    }
  }

  /**
   * The page's backend could not validate a token because the main API is down (reverify): the next
   * initialization gives the main API only the short probe before the standby hosts.
   */
  suspectMain(): void {
    this.state().mainFailedAt = Date.now();
  }

  /** Every host that may serve the widget's files: the main API first, then the standby hosts. */
  widgetHosts(): string[] {
    const { hosts } = standbyHosts(this.main, this.options.bypassServers);
    return [this.main, ...bypassOrder(hosts, this.state().lastGood).filter((h) => h !== this.main)];
  }

  /** POST /v1/challenge/submit (or another step: alternative) to the host the challenge came from. */
  async submit<T>(base: string, body: unknown, signal: AbortSignal, step = 'submit'): Promise<T> {
    try {
      return await post<T>(base, `/v1/challenge/${step}`, body, signal, TIMEOUTS.submit);
    } catch (error) {
      if (!signal.aborted) this.noteFailure(base, judge(error));
      throw error;
    }
  }

  /** Remembers a failure for the next initialization: a failed main API gets a short probe for a while. */
  private noteFailure(base: string, verdict: ReturnType<typeof judge>): void {
    const state = this.state();
    if (verdict === 'failover' && base === this.main) state.mainFailedAt = Date.now();
    if (verdict !== 'answer' && state.lastGood === base) state.lastGood = undefined;
  }
}

/** Forgets what this page learnt (tests). */
export function forgetRoutes(): void {
  states.clear();
  warned.clear();
}
