/**
 * The medium tier's image challenges, generated procedurally on the server. The main API and the standby
 * service both use this module; it holds no state and writes nothing: the caller seals `answer` into the
 * challenge token, sends `view` to the browser, and later calls `verifyChallenge` with the opened answer.
 */
import type { Detail } from './backgrounds.ts';
import { type ClickAnswer, type ClickChallenge, generateClick, verifyClick } from './click.ts';
import { cryptoRandom, type Random } from './random.ts';
import { generateSelect, type SelectAnswer, type SelectChallenge, verifySelect } from './select.ts';
import { generateSlide, type SlideAnswer, type SlideChallenge, verifySlide } from './slide.ts';
import type { ChallengeKind, ImageFormat, Verdict } from './types.ts';

export type { Detail } from './backgrounds.ts';
export * from './click.ts';
export { viewToJson } from './json.ts';
export { cryptoRandom, type Random, seededRandom } from './random.ts';
export * from './select.ts';
export { COLOUR_NAMES, type ColourName, SHAPES, type Shape } from './shapes.ts';
export * from './slide.ts';
export {
  type InputKind,
  KEYBOARD_LARGE_STEP_PX,
  KEYBOARD_STEP_PX,
  TRAJECTORY_LIMITS,
  type TrajectoryPoint,
} from './trajectory.ts';
export {
  decodePrint,
  encodePrint,
  nearDuplicate,
  slidePrint,
  TRAJECTORY_PRINT,
  type TrajectoryPrint,
} from './trajectory-print.ts';
export * from './types.ts';
export type { AlternativeAnswer, ImageOffer, InitAnswer, SubmitAnswer } from './wire.ts';

export const CHALLENGE_KINDS: readonly ChallengeKind[] = ['slide', 'click', 'select'];

/**
 * Answers the API accepts per challenge: one, as mature slide CAPTCHAs do. A wrong answer gets a fresh
 * picture, never a second try on the same one: a second try would let a solver that narrowed the answer to
 * two places (both holes of a slide, two orders of click symbols) take both, and double a slide guess (2 x
 * 11 of 161 positions). A blind slide guess is 13 in 161 (SLIDE_TOLERANCE_PX); click and select far
 * below 1 %. A person who misses gets a new picture (one reload), and the API counts the miss against the
 * address (api/src/risk/answer-history.ts).
 */
export const MAX_ATTEMPTS: Readonly<Record<ChallengeKind, number>> = { slide: 1, click: 1, select: 1 };

export type Challenge = SlideChallenge | ClickChallenge | SelectChallenge;
export type ChallengeAnswer = SlideAnswer | ClickAnswer | SelectAnswer;

export interface GenerateOptions {
  /** `simple` draws fewer decorations (no clutter, noise or decoy gap): cheaper, easier for bots. */
  detail?: Detail;
  /** Default `webp`; `png` for tools and docs. */
  format?: ImageFormat;
  /** Default `cryptoRandom()`; pass `seededRandom(seed)` only in tests and benchmarks. */
  rng?: Random;
}

/** Generates one challenge of the given kind. */
export function generateChallenge(kind: ChallengeKind, options: GenerateOptions = {}): Promise<Challenge> {
  const { rng = cryptoRandom(), ...rest } = options;
  switch (kind) {
    case 'slide':
      return generateSlide(rng, rest);
    case 'click':
      return generateClick(rng, rest);
    case 'select':
      return generateSelect(rng, rest);
  }
}

/**
 * Verifies a submission against the answer opened from the sealed challenge. `submission` is raw client
 * input (each verifier parses it); `answer` is trusted, since only the server could have sealed it.
 */
export function verifyChallenge(kind: ChallengeKind, answer: ChallengeAnswer, submission: unknown): Verdict {
  switch (kind) {
    case 'slide':
      return verifySlide(answer as SlideAnswer, submission);
    case 'click':
      return verifyClick(answer as ClickAnswer, submission);
    case 'select':
      return verifySelect(answer as SelectAnswer, submission);
  }
}
