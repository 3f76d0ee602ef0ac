import { z } from 'zod';

/**
 * The wire shapes of the challenge protocol (docs/protocol.md) that the API and a standby host answer and
 * the widget reads: one declaration for all of them, as zod schemas the API's OpenAPI document is built
 * from, with their TypeScript types. The widget imports the types only (`import type`), so its bundles
 * hold none of this module.
 */

/** An object the protocol carries whole (a puzzle, a picture's view): its fields are another module's. */
const opaque = (description: string) => z.looseObject({}).meta({ description });

/** The `image` field of a challenge: the picture's view, drawn by the widget's UI module for its kind. */
export const imageOffer = z.strictObject({
  kind: z.enum(['slide', 'click', 'select']),
  view: z.looseObject({}),
  alternative: z.literal(true).optional().meta({
    description: 'POST /v1/challenge/alternative offers a proof-of-work instead of the picture.',
  }),
  keyboard_pow: opaque(
    'An answer made with the keyboard must carry this puzzle\'s solution as answer.pow (slide: {x, input: "keyboard", trajectory, pow}; click: {input: "keyboard", picks: [clicks], pow}; select: {input: "keyboard", picks: [tile indices], pow}).',
  ).optional(),
});

const challengeId = z.string().regex(/^ch_/);

/** A challenge to solve: the answer of POST /v1/challenge/init when one is served. */
const challengeAnswer = z.strictObject({
  mode: z.literal('challenge'),
  challenge_id: challengeId,
  challenge: z.string().meta({ description: 'Sealed (AES-256-GCM): send it back unchanged.' }),
  tier: z.enum(['invisible', 'image', 'hard']),
  expires_in: z.int(),
  pow: opaque('Proof-of-work puzzle (core/src/pow): solve it in a Web Worker.').optional(),
  image: imageOffer.optional(),
});

/** `data` of POST /v1/challenge/init: a challenge, or a `dg_` token when the app's quota is exhausted. */
export const initAnswer = z.discriminatedUnion('mode', [
  z.strictObject({
    mode: z.literal('degraded'),
    pass_token: z.string().regex(/^dg_/),
    expires_in: z.int(),
  }),
  challengeAnswer,
]);

/** `data` of POST /v1/challenge/submit: the pass token one solved challenge yields. */
export const submitAnswer = z.strictObject({
  pass_token: z.string().regex(/^pt_/),
  challenge_id: challengeId,
  expires_in: z.int(),
});

/**
 * `data` of POST /v1/challenge/init on a standby (`bypass.`) host while it serves: always a challenge (a
 * standby has no quota to degrade from), marked `offline`, which tells a widget pointed at a standby as its
 * main API that it is.
 */
export const offlineInitAnswer = challengeAnswer.extend({ offline: z.literal(true) });

/** `data` of POST /v1/challenge/submit on a standby host: an `offline_` token, valid at the fallback host. */
export const offlineSubmitAnswer = submitAnswer.extend({ pass_token: z.string().regex(/^offline_/) });

/** `data` of POST /v1/challenge/alternative: the accessible alternative's sealed ticket and its puzzle. */
export const alternativeAnswer = z.strictObject({
  ticket: z.string().meta({
    description: 'Sealed: submitted back as answer.alternative with answer.pow, the solution of pow.',
  }),
  pow: opaque('Proof-of-work puzzle (core/src/pow).'),
  seconds: z.number().meta({ description: 'Expected solve time of one browser core' }),
  expires_in: z.int(),
});

type Offer = z.output<typeof imageOffer>;
/** An image offer whose view is typed by the reader (the widget's UI module for its kind). */
export type ImageOffer<View = unknown> = Omit<Offer, 'view' | 'keyboard_pow'> & {
  view: View;
  keyboard_pow?: unknown;
};

type Init = z.output<typeof initAnswer>;
type Challenge = Extract<Init, { mode: 'challenge' }>;
export type InitAnswer<View = unknown> =
  | Extract<Init, { mode: 'degraded' }>
  | (Omit<Challenge, 'image' | 'pow'> & { pow?: unknown; image?: ImageOffer<View> });

/** A standby host's init answer, its picture typed by the reader as in {@link InitAnswer}. */
export type OfflineInitAnswer<View = unknown> = Extract<InitAnswer<View>, { mode: 'challenge' }> & {
  offline: true;
};

export type SubmitAnswer = z.output<typeof submitAnswer>;
export type OfflineSubmitAnswer = z.output<typeof offlineSubmitAnswer>;
export type AlternativeAnswer = z.output<typeof alternativeAnswer>;
