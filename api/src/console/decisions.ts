/** One risk decision as the console lists it: what was decided for whom, and why. */
export interface RiskDecision {
  at: string;
  app_key: string;
  action: string;
  ip: string;
  score: number;
  tier: string;
  reasons: string[];
}

/**
 * The most recent risk decisions of this process, in a ring buffer of fixed size: constant memory,
 * constant time on the request path, nothing written to the database. Each instance keeps its own.
 */
export class RiskDecisions {
  readonly capacity: number;
  readonly #ring: (RiskDecision | undefined)[];
  #next = 0;

  constructor(capacity = 500) {
    this.capacity = capacity;
    this.#ring = new Array(capacity);
  }

  record(decision: Omit<RiskDecision, 'at'>): void {
    this.#ring[this.#next] = { at: new Date().toISOString(), ...decision };
    this.#next = (this.#next + 1) % this.capacity;
  }

  /** Newest first, at most `limit`, optionally for one app. */
  recent(limit: number, appKey?: string): RiskDecision[] {
    const out: RiskDecision[] = [];
    for (let i = 1; i <= this.capacity && out.length < limit; i++) {
      const d = this.#ring[(this.#next - i + this.capacity) % this.capacity];
      if (!d) break;
      if (!appKey || d.app_key === appKey) out.push(d);
    }
    return out;
  }
}
