/** Shapes shared by the three challenge kinds. */

export type ChallengeKind = 'slide' | 'click' | 'select';

/**
 * Image encodings a generator can produce. JPEG is the default (the size of lossy WebP here at a ninth of
 * its encoding cost; images with transparency go out as lossless WebP); `webp` and `png` for tools.
 */
export type ImageFormat = 'jpeg' | 'webp' | 'png';

/** One encoded image, as the browser receives it. */
export interface EncodedImage {
  mime: 'image/jpeg' | 'image/webp' | 'image/png';
  width: number;
  height: number;
  data: Buffer;
}

/**
 * Text shown to the user, as a translation key plus parameters: the widget owns every language. Parameter
 * values are themselves keys or numbers (`{ shape: 'star' }` is shown via `challenge.shape.star`).
 */
export interface Prompt {
  key: string;
  params: Record<string, string | number>;
}

/**
 * Why an answer was refused. For server logs and the risk engine only: the API answers the client with a
 * bare `invalid_answer`, since telling a bot which check failed would let it tune itself.
 */
export type RejectReason =
  | 'malformed'
  | 'position'
  | 'order'
  | 'count'
  | 'selection'
  | 'too_fast'
  | 'too_slow'
  | 'too_few_samples'
  | 'too_straight'
  | 'constant_speed'
  | 'erratic'
  | 'inconsistent'
  /** A slide drag that nearly repeats one the app saw recently (checked by the API, not the verifier). */
  | 'replayed';

/** A verification result: refusal is an answer, not an exception. */
export type Verdict = { ok: true } | { ok: false; reason: RejectReason };

export const ACCEPT: Verdict = Object.freeze({ ok: true });
export const reject = (reason: RejectReason): Verdict => ({ ok: false, reason });
