import { GatehouseError } from '@gatehouse/core/errors';
import { overShare, SHARE_WINDOW_MS } from '../quotas/source-share.ts';
import { type AnswerHistory, answerFindings, historyKey, MemoryAnswerHistory } from './answer-history.ts';
import { type RiskPolicy, type Tier, tierFor } from './policy.ts';
import {
  PRESSURE_WINDOW_MS,
  type Pressure,
  type PressureSource,
  pressureOf,
  pressureSources,
  sharePressure,
} from './pressure.ts';
import type { DatacenterRanges } from './ranges.ts';
import { Reputation } from './reputation.ts';
import { automationRules } from './rules/automation.ts';
import { behaviourRules } from './rules/behaviour.ts';
import { headerRules } from './rules/headers.ts';
import { networkFindings, networkRules, velocityKeys } from './rules/network.ts';
import type { ClientSignals, RequestFacts, RiskFinding } from './signals.ts';
import { MemoryVelocity, type VelocityCounter } from './velocity.ts';

const compiled = new WeakMap<object, Reputation>();

/** A policy's own lists, compiled once per (cached, resolvePolicy) policy object rather than per request. */
function policyReputation(lists: NonNullable<RiskPolicy['reputation']>): Reputation {
  let reputation = compiled.get(lists);
  if (!reputation) {
    reputation = new Reputation(lists, 'risk_policy.reputation');
    compiled.set(lists, reputation);
  }
  return reputation;
}

/** Every request starts here: an unknown browser is neither trusted nor suspected. */
export const BASE_SCORE = 10;

export interface RiskInput {
  appId: string;
  facts: RequestFacts;
  signals: ClientSignals | undefined;
  policy: RiskPolicy;
  /** A valid server token was presented: the integrator's backend vouches for this request. */
  serverToken: boolean;
  /** A verified attestation (Privacy Pass) was presented. */
  attested: boolean;
  /** The units of the app's plan this month: with it, each source's share of them is counted. */
  monthlyQuota?: number;
}

export interface RiskAssessment {
  score: number;
  tier: Tier;
  /**
   * Rule reasons with their points (`network.datacenter:+25`): logged, kept with the pass token and
   * answered to the integrator by /v1/validate (`risk.reasons`); never sent to the browser.
   */
  reasons: string[];
  /**
   * Set when the tier is `reject` because of consecutive wrong answers from the address, or because a
   * source's pressure reached the refusal: how long until its count decays under it (sent as Retry-After).
   */
  retryAfterSeconds?: number;
  /**
   * What sustained automation from the request's sources does to its price: the proof-of-work's work is
   * multiplied by `pressure.multiplier` (1 at the base price), and the tier already says image or reject.
   */
  pressure: Pressure;
}

/**
 * Scores a challenge request from 0 to 100 and picks its tier. Server-verified facts (server token,
 * attestation, allow lists) may lower the score; client-sent signals only ever raise it (invariant 3).
 * Throws `rate_limited` when one IP initializes faster than the policy allows, sooner at high risk.
 */
export class RiskEngine {
  readonly #velocity: VelocityCounter;
  readonly #reputation: Reputation | undefined;
  /** Hosting/datacenter ranges known out of the box (RISK_DATACENTER_RANGES). */
  readonly datacenter: DatacenterRanges | undefined;
  /** Recent image answers per app and address (wrong ones escalate, keyboard ones add a little). */
  readonly answers: AnswerHistory;
  /** Challenges per source over the sliding hour (pressure pricing): the same store as the velocity counts. */
  readonly #pressure: VelocityCounter;
  /** Challenges per client and network over 30 days: their share of the app's monthly units. */
  readonly #share: VelocityCounter;
  /** The time the counts are read at: a bench or a test replays an hour in moments by setting it. */
  clock: () => number = Date.now;

  constructor(
    velocity: VelocityCounter,
    reputation?: Reputation,
    datacenter?: DatacenterRanges,
    answers: AnswerHistory = new MemoryAnswerHistory(),
  ) {
    this.#velocity = velocity;
    this.#reputation = reputation;
    this.datacenter = datacenter;
    this.answers = answers;
    this.#pressure =
      velocity.withWindow?.(PRESSURE_WINDOW_MS) ?? new MemoryVelocity(200_000, PRESSURE_WINDOW_MS);
    this.#share = velocity.withWindow?.(SHARE_WINDOW_MS) ?? new MemoryVelocity(200_000, SHARE_WINDOW_MS);
  }

  /**
   * The assessment without a promise where the counts live in this process (init awaits nothing for it);
   * undefined where they are shared (Redis): `assess` then reads them. Throws as `assess` does.
   */
  assessNow(input: RiskInput): RiskAssessment | undefined {
    const velocity = this.#velocity;
    const answers = this.answers;
    const pressure = this.#pressure;
    const share = this.#share;
    if (!velocity.hitNow || !answers.readNow || !pressure.hitNow || !share.hitNow) return undefined;
    const now = this.clock();
    const where = { ip: input.facts.ip, appId: input.appId };
    const network = networkFindings(
      where.ip,
      velocity.hitNow(velocityKeys(where), now),
      this.#reputations(input),
      input.policy.velocity,
      this.datacenter,
    );
    const sources = this.#sources(input);
    return this.#judge(
      input,
      network,
      answers.readNow(historyKey(input.appId, input.facts.ip), now),
      this.#priced(
        input,
        sources.sources,
        pressure.hitNow(sources.keys, now),
        input.monthlyQuota === undefined ? [] : share.hitNow(sources.shareKeys, now),
      ),
    );
  }

  async assess(input: RiskInput): Promise<RiskAssessment> {
    const local = this.assessNow(input);
    if (local) return local;
    const now = this.clock();
    const where = { ip: input.facts.ip, appId: input.appId };
    const sources = this.#sources(input);
    // Shared counts (Redis): all read in one wait.
    const [network, counts, pressed, shared] = await Promise.all([
      networkRules(
        where,
        this.#velocity,
        this.#reputations(input),
        input.policy.velocity,
        this.datacenter,
        now,
      ),
      this.answers.read(historyKey(input.appId, input.facts.ip), now),
      this.#pressure.hit(sources.keys, now),
      input.monthlyQuota === undefined ? [] : this.#share.hit(sources.shareKeys, now),
    ]);
    return this.#judge(input, network, counts, this.#priced(input, sources.sources, pressed, shared));
  }

  #sources(input: RiskInput) {
    return pressureSources(input.appId, input.facts.ip, this.datacenter?.provider(input.facts.ip));
  }

  /** The sources' price from their hourly counts, raised for a source past its share of the month's units. */
  #priced(
    input: RiskInput,
    sources: readonly PressureSource[],
    pressed: number[],
    shared: number[],
  ): Pressure {
    const policy = input.policy.pressure;
    const pressure = pressureOf(pressed, sources, policy);
    const over =
      input.monthlyQuota === undefined
        ? undefined
        : overShare(shared, input.monthlyQuota, policy.quota_share);
    return over ? sharePressure(pressure, over, policy) : pressure;
  }

  #reputations(input: RiskInput): Reputation[] {
    return [this.#reputation, input.policy.reputation && policyReputation(input.policy.reputation)].filter(
      (r): r is Reputation => r !== undefined,
    );
  }

  #judge(
    input: RiskInput,
    network: ReturnType<typeof networkFindings>,
    counts: Parameters<typeof answerFindings>[0],
    measured: Pressure,
  ): RiskAssessment {
    const answered = answerFindings(counts);
    const findings: RiskFinding[] = [
      ...network.findings,
      ...headerRules(input.facts),
      ...automationRules(input.signals, input.facts.platform),
      ...behaviourRules(input.signals),
      ...answered.findings,
    ];
    if (input.serverToken) findings.push({ points: -10, reason: 'trust.server_token' });
    if (input.attested) findings.push({ points: -25, reason: 'trust.attestation' });

    const total = findings.reduce((sum, f) => sum + f.points, BASE_SCORE);
    const score = Math.max(0, Math.min(100, Math.round(total)));
    // Too many wrong answers in a row: refused, whatever the policy's high tier, until the count decays.
    const refused = answered.refuseForSeconds > 0;
    // An address the operator allows is never priced up (an integrator's own backend, a known office).
    const pressure = findings.some((f) => f.reason === 'network.allow_list') ? UNPRESSED : measured;
    const tier = refused ? 'reject' : pressedTier(tierFor(score, input.policy), pressure);

    const limit =
      tier === 'hard' || tier === 'reject'
        ? input.policy.rate_limit.high_risk_ip_per_minute
        : input.policy.rate_limit.ip_per_minute;
    if (network.ipRate > limit) {
      throw new GatehouseError(
        'rate_limited',
        'Too many challenges from this address. Try again in a minute.',
        {
          'Retry-After': '60',
        },
      );
    }
    const reasons = findings.map((f) => `${f.reason}:${f.points > 0 ? '+' : ''}${f.points}`);
    reasons.push(...pressure.reasons);
    if (refused) reasons.push('answers.refused');
    const retryAfterSeconds = refused
      ? answered.refuseForSeconds
      : tier === 'reject'
        ? pressure.retryAfterSeconds
        : undefined;
    return { score, tier, reasons, pressure, ...(retryAfterSeconds ? { retryAfterSeconds } : {}) };
  }
}

const UNPRESSED: Pressure = Object.freeze({ doublings: 0, multiplier: 1, stage: 'base', reasons: [] });

/**
 * The score's tier raised by the pressure: a priced request needs a proof-of-work to carry its price (an
 * image alone costs a script next to nothing), the image stage adds the picture, the last stage refuses.
 */
function pressedTier(tier: Tier, pressure: Pressure): Tier {
  if (tier === 'reject' || pressure.stage === 'base') return tier;
  if (pressure.stage === 'reject') return 'reject';
  if (tier === 'image' || pressure.stage === 'image') return 'hard';
  return tier;
}
