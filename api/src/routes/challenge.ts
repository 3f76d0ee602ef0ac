import { alternativeAnswer, initAnswer, submitAnswer } from '@gatehouse/core/challenges/wire';
import { success } from '@gatehouse/core/errors';
import { openCors } from '@gatehouse/core/http';
import { bodyErrors, errors, ok } from '../answers.ts';
import { alternativeBody, requestAlternative } from '../challenges/alternative.ts';
import { initBody, initChallenge } from '../challenges/init.ts';
import { submitBody, submitChallenge } from '../challenges/submit.ts';
import { type Route, route } from '../route-table.ts';

/**
 * The end-user half: called by the widget from the integrator's pages on any origin, with only the public
 * app key, so CORS is open and no credentials are ever involved.
 */
export const challengeRoutes: Route[] = [
  route({
    method: 'options',
    path: '/v1/challenge/{step}',
    doc: false,
    use: () => [openCors],
    handler: () =>
      function preflight(ctx) {
        ctx.status = 204;
      },
  }),
  route({
    method: 'post',
    path: '/v1/challenge/init',
    hot: true,
    doc: () => ({
      summary:
        'Start a challenge (called by the widget, public app key only). Scored here; the tier is chosen server-side. See docs/protocol.md.',
      responses: {
        '200': {
          description: 'A challenge, or a dg_ token when the quota is exhausted',
          json: ok(initAnswer),
        },
        ...errors(
          ...bodyErrors,
          'invalid_app_key',
          'app_disabled',
          'domain_not_allowed',
          'server_token_required',
          'server_token_invalid',
          'server_token_expired',
          'server_token_exhausted',
          'server_token_action_mismatch',
          'server_token_binding_mismatch',
          'request_rejected',
          'rate_limited',
          'database_unavailable',
          // An image challenge asked for faster than the workers draw them is shed, with Retry-After.
          'service_unavailable',
        ),
      },
    }),
    body: initBody,
    use: () => [openCors],
    handler: ({ deps }) =>
      async function init(ctx, { body }) {
        // The parsed body is this request's own: completed in place rather than copied.
        if (body.referer === undefined) {
          const referer = ctx.get('Referer');
          if (referer) body.referer = referer;
        }
        // Node's header object, as ctx.get reads it ('' where absent), by the lowercase names it keys them by.
        const { headers } = ctx.req;
        return success(
          await initChallenge(deps, body, {
            ip: ctx.ip,
            origin: headers.origin || undefined,
            userAgent: headers['user-agent'] ?? '',
            acceptLanguage: headers['accept-language'] ?? '',
            secChUa: (headers['sec-ch-ua'] as string | undefined) ?? '',
            secChUaMobile: (headers['sec-ch-ua-mobile'] as string | undefined) ?? '',
            secChUaPlatform: (headers['sec-ch-ua-platform'] as string | undefined) ?? '',
          }),
        );
      },
  }),
  route({
    method: 'post',
    path: '/v1/challenge/alternative',
    doc: () => ({
      summary:
        'The accessible alternative to an image challenge: a longer proof-of-work instead of the picture, one per challenge, limited per address and hour (docs/accessibility.md). Submit its solution with the original challenge as answer: {alternative: ticket, pow: solution}.',
      responses: {
        '200': {
          description: 'The sealed ticket and its puzzle',
          json: ok(alternativeAnswer),
        },
        ...errors(
          ...bodyErrors,
          'invalid_app_key',
          'app_disabled',
          'challenge_not_found',
          'challenge_expired',
          'database_unavailable',
          'rate_limited',
        ),
      },
    }),
    body: alternativeBody,
    use: () => [openCors],
    handler: ({ deps }) =>
      async function alternative(ctx, { body }) {
        return success(await requestAlternative(deps, body, ctx.ip));
      },
  }),
  route({
    method: 'post',
    path: '/v1/challenge/submit',
    doc: () => ({
      summary:
        'Submit the proof-of-work solution and/or the image answer; one solved challenge yields one pass token.',
      responses: {
        '200': {
          description: 'The pass token',
          json: ok(submitAnswer),
        },
        ...errors(
          ...bodyErrors,
          'invalid_app_key',
          'app_disabled',
          'challenge_not_found',
          'challenge_expired',
          'invalid_answer',
          'database_unavailable',
        ),
      },
    }),
    body: submitBody,
    use: () => [openCors],
    handler: ({ deps }) =>
      async function submit(_ctx, { body }) {
        return success(await submitChallenge(deps, body));
      },
  }),
];
