/**
 * What the loader (gatehouse.js) and the lazily loaded challenge UI chunk agree on. Types only: the two
 * are separate bundles, so nothing here may hold code either side would have to share.
 */

/**
 * An image as the API sends it inside a challenge view: `src` is a data: URL (api/src/challenges/kinds.ts).
 * Base64 `data`, or a serialised Node Buffer there, is understood too.
 */
export interface ViewImage {
  mime: string;
  width: number;
  height: number;
  src?: string;
  data?: string | { type: 'Buffer'; data: number[] };
}

/** A translation key and its parameters, as the server sends prompts. */
export interface Prompt {
  key: string;
  params: Record<string, string | number>;
}

/** The `image` field of an init answer. */
export interface ImageChallenge {
  kind: 'slide' | 'click' | 'select';
  // biome-ignore lint/suspicious/noExplicitAny: each kind's view is parsed by its own UI module.
  view: any;
  /** The main API offers POST /v1/challenge/alternative for it (docs/accessibility.md). */
  alternative?: true;
  /** The puzzle whose solution an answer made with the keyboard carries as `pow`. */
  keyboard_pow?: unknown;
}

/** What a submission came to, as the challenge UI needs to know it. */
export type SubmitOutcome =
  | { type: 'ok' }
  /** The challenge is spent (a wrong answer too): the loader brings a new one (`ChallengeView.replace`). */
  | { type: 'restart'; message: string };

/** What the loader gives the UI for one challenge session. */
export interface ChallengeHost {
  lang: string;
  theme: 'light' | 'dark' | 'auto';
  /** Popup: a modal dialog the UI creates; embedded: render inside `slot`. */
  presentation: 'popup' | 'embedded';
  slot?: HTMLElement;
  /** Loader strings (shared by both bundles' callers). */
  t(key: LoaderKey): string;
  submit(answer: unknown): Promise<SubmitOutcome>;
  /** The user asked for another challenge. */
  refresh(): void;
  /** Solves a proof-of-work puzzle in the loader's worker; `progress` gets 0..1. */
  solve(puzzle: unknown, progress: (fraction: number) => void): Promise<unknown>;
  /**
   * POSTs the shown challenge (app key, id, sealed) to /v1/challenge/`step` on its host; the answer's data.
   * The challenge's own timeout stops: what follows keeps its own expiry.
   */
  // biome-ignore lint/suspicious/noExplicitAny: the step's answer, shaped by docs/protocol.md.
  post(step: string): Promise<any>;
  /** The user closed the popup (Escape or the close button) without solving. */
  close(): void;
}

/** One mounted challenge. */
export interface ChallengeView {
  replace(image: ImageChallenge, message?: string): void;
  /** Proof-of-work progress (hard tier), 0..1: shown while an answer waits for it. */
  progress(fraction: number): void;
  /** Shows success for a moment, then resolves (the loader then destroys the view). */
  succeed(): Promise<void>;
  destroy(): void;
}

/** The UI chunk's export, registered on `globalThis[UI_GLOBAL]`. */
export interface ChallengeUi {
  mount(host: ChallengeHost, image: ImageChallenge): ChallengeView;
}

export const UI_GLOBAL = '__gatehouseUi1';

export type LoaderKey =
  | 'verify'
  | 'verifying'
  | 'loading'
  | 'checking'
  | 'success'
  | 'failed'
  | 'retry'
  | 'expired'
  | 'close'
  | 'network'
  | 'unverified';
