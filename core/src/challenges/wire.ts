import type { ChallengeKind } from './types.ts';

/**
 * The wire shapes of the challenge protocol (docs/protocol.md) that the API and a standby host answer and
 * the widget reads: one declaration for all of them. Types only, so the widget's bundles hold none of it.
 */

/** The `image` field of a challenge: the picture's view, drawn by the widget's UI module for its kind. */
export interface ImageOffer<View = unknown> {
  kind: ChallengeKind;
  view: View;
  /** The main API offers POST /v1/challenge/alternative for it (docs/accessibility.md). */
  alternative?: true;
  /** The puzzle whose solution an answer made with the keyboard carries as `pow`. */
  keyboard_pow?: unknown;
}

/** `data` of POST /v1/challenge/init: a challenge, or a `dg_` token when the app's quota is exhausted. */
export type InitAnswer<View = unknown> =
  | { mode: 'degraded'; pass_token: string; expires_in: number }
  | {
      mode: 'challenge';
      challenge_id: string;
      /** Sealed: sent back unchanged with the answer. */
      challenge: string;
      tier: 'invisible' | 'image' | 'hard';
      expires_in: number;
      /** A proof-of-work puzzle (core/src/pow), solved in a Web Worker. */
      pow?: unknown;
      image?: ImageOffer<View>;
    };
