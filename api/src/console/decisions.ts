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
  readonly #ring: (Omit<RiskDecision, 'at'> | undefined)[];
  /** When each was recorded (ms): made an ISO date when read, not per init. */
  readonly #at: Float64Array;
  #next = 0;

  constructor(capacity = 500) {
    this.capacity = capacity;
    this.#ring = new Array(capacity);
    this.#at = new Float64Array(capacity);
  }

  /** Keeps `decision` itself (a caller hands over a fresh object and never changes it after). */
  record(decision: Omit<RiskDecision, 'at'>): void {
    this.#ring[this.#next] = decision;
    this.#at[this.#next] = Date.now();
    this.#next = (this.#next + 1) % this.capacity;
  }

  /** Newest first, at most `limit`, optionally for one app. */
  recent(limit: number, appKey?: string): RiskDecision[] {
    const out: RiskDecision[] = [];
    for (let i = 1; i <= this.capacity && out.length < limit; i++) {
      const at = (this.#next - i + this.capacity) % this.capacity;
      const d = this.#ring[at];
      if (!d) break;
      if (!appKey || d.app_key === appKey) out.push({ at: new Date(this.#at[at]!).toISOString(), ...d });
    }
    return out;
  }
}
