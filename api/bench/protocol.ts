/**
 * Messages between the bench (parent) and its server children over the fork IPC channel. The children
 * prepare data with the API's own runtime before a case starts, never during one.
 */
export type Command =
  | {
      id: number;
      type: 'create-app';
      plan: 'free' | 'pro' | 'enterprise';
      /** For the challenge cases: no per-IP limits (all load comes from 127.0.0.1) and a forced tier. */
      challenge?: 'invisible-test-mode' | 'slide';
    }
  /** Initializes and solves `count` challenges in-process; answers the submit bodies, ready to send. */
  | { id: number; type: 'solved-challenges'; appKey: string; count: number }
  /** Mints `count` pass tokens; with `consume`, validates each once so that it is already used. */
  | { id: number; type: 'mint'; appId: string; count: number; consume: boolean }
  /** CPU time this process has used so far (process.cpuUsage), in microseconds. */
  | { id: number; type: 'cpu' }
  /** Starts or stops V8's sampling profiler; stop answers with the profile summarised. */
  | { id: number; type: 'profile-start' }
  | { id: number; type: 'profile-stop' }
  | { id: number; type: 'close' };

export type Reply = { id: number; error?: string; value?: unknown };

/** The first message a child sends: where it listens. */
export type Ready = { type: 'ready'; port: number; database: string };

export interface CreatedApp {
  appId: string;
  appKey: string;
  appSecret: string;
}

/** Self time by category (package or runtime bucket) and by function, in milliseconds. */
export interface ProfileSummary {
  totalMs: number;
  byCategory: { name: string; ms: number }[];
  byFunction: { name: string; ms: number }[];
}
