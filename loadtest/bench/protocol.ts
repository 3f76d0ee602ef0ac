/**
 * Messages between the bench (parent) and its server children over the fork IPC channel. The children
 * prepare data with the API's own runtime before a case starts, never during one.
 */
export type Command =
  | {
      id: number;
      type: 'create-app';
      plan: 'free' | 'pro' | 'enterprise';
      /**
       * For the challenge cases: no per-IP limits (all load comes from 127.0.0.1) and a tier: forced (test
       * mode's invisible tier; `invisible-forced`, the invisible tier for every score, not in test mode; the
       * slide tier) or, for `invisible`, the default policy's, by the risk score.
       */
      challenge?: 'invisible-test-mode' | 'invisible' | 'invisible-forced' | 'slide';
    }
  /**
   * Initializes and solves `count` challenges in-process; answers the submit bodies, ready to send. With
   * `browser`, initializes them as an ordinary desktop Chrome would (headers and signals), so that a non-test
   * app gets the puzzle the default policy sets for such a visitor.
   */
  | { id: number; type: 'solved-challenges'; appKey: string; count: number; browser?: boolean }
  /**
   * Initializes `count` invisible-tier challenges as a desktop Chrome would (the default policy's real
   * puzzle) and answers submit bodies with a malformed proof-of-work: what an attacker sends for free.
   */
  | { id: number; type: 'wrong-submits'; appKey: string; count: number }
  /** Mints `count` pass tokens; with `consume`, validates each once so that it is already used. */
  | { id: number; type: 'mint'; appId: string; count: number; consume: boolean }
  /** Peer child: `count` Cap challenges created and solved in-process; answers the redeem bodies. */
  | { id: number; type: 'cap-solved'; count: number }
  /** Peer child: `count` Cap tokens (redeemed challenges); with `consume`, validated once already. */
  | { id: number; type: 'cap-tokens'; count: number; consume: boolean }
  /** Peer child: `count` solved ALTCHA payloads (base64); with `consume`, verified and recorded once already. */
  | { id: number; type: 'altcha-payloads'; count: number; consume: boolean }
  /** Peer child: how many validations/redemptions were accepted and rejected since the last ask. */
  | { id: number; type: 'outcomes' }
  /**
   * API child: starts watching its event loop's delay and garbage-collection pauses; `watch-stop` answers
   * what they were since (LoopWatch): where a bystander's slow answers come from.
   */
  | { id: number; type: 'watch-start' }
  | { id: number; type: 'watch-stop' }
  /** CPU time this process has used so far (process.cpuUsage), in microseconds. */
  | { id: number; type: 'cpu' }
  /** This process's event loop so far (performance.eventLoopUtilization: idle and active ms). */
  | { id: number; type: 'loop' }
  /** Starts or stops V8's sampling profiler; stop answers with the profile summarised. */
  | { id: number; type: 'profile-start' }
  | { id: number; type: 'profile-stop'; file?: string }
  | { id: number; type: 'close' };

export type Reply = { id: number; error?: string; value?: unknown };

/** The first message a child sends: where it listens. */
export type Ready = { type: 'ready'; port: number; database: string };

/** What `solved-challenges` answers: the submit bodies and the puzzle they solve. */
export interface SolvedChallenges {
  bodies: string[];
  /** The puzzle's parameters (all the challenges of one call get the same); absent for the image tiers. */
  pow?: { algorithm: string; memoryKiB: number; count: number; target: number };
}

/** Accepted and rejected answers counted by the peer child (a rejection in a fresh case is a harness fault). */
export interface Outcomes {
  accepted: number;
  rejected: number;
}

export interface CreatedApp {
  appId: string;
  appKey: string;
  appSecret: string;
}

/** What the API child's event loop and garbage collector did between `watch-start` and `watch-stop`. */
export interface LoopWatch {
  /** The event loop's delay (perf_hooks.monitorEventLoopDelay, 1 ms resolution), ms. */
  delay: { p50: number; p99: number; max: number };
  /** Garbage-collection pauses (PerformanceObserver 'gc'): how many, their total and the longest, ms. */
  gc: { count: number; totalMs: number; maxMs: number; major: number; majorMs: number };
  /** Claiming statements sent and claims in them over the window (pass-token-claims.ts). */
  claims: { statements: number; claims: number; roundTripMs: number; slowestMs: number };
}

/** Self time by category (package or runtime bucket) and by function, in milliseconds. */
export interface ProfileSummary {
  totalMs: number;
  byCategory: { name: string; ms: number }[];
  byFunction: { name: string; ms: number }[];
}
