import { success } from '@gatehouse/core/errors';
import { openCors, readBody } from '@gatehouse/core/http';
import type Router from '@koa/router';
import { alternativeBody, requestAlternative } from '../challenges/alternative.ts';
import { initBody, initChallenge } from '../challenges/init.ts';
import { submitBody, submitChallenge } from '../challenges/submit.ts';
import type { Deps } from '../deps.ts';

/**
 * The end-user half: called by the widget from the integrator's pages on any origin, with only the public
 * app key, so CORS is open and no credentials are ever involved.
 */
export function challengeRoutes(router: Router, deps: Deps): void {
  router.options('/v1/challenge/:step', openCors, function preflight(ctx) {
    ctx.status = 204;
  });
  router.post('/v1/challenge/init', openCors, async function init(ctx) {
    const body = readBody(ctx, initBody);
    // The parsed body is this request's own: completed in place rather than copied.
    if (body.referer === undefined) {
      const referer = ctx.get('Referer');
      if (referer) body.referer = referer;
    }
    ctx.body = success(
      await initChallenge(deps, body, {
        ip: ctx.ip,
        origin: ctx.get('Origin') || undefined,
        userAgent: ctx.get('User-Agent'),
        acceptLanguage: ctx.get('Accept-Language'),
        secChUa: ctx.get('Sec-CH-UA'),
        secChUaMobile: ctx.get('Sec-CH-UA-Mobile'),
        secChUaPlatform: ctx.get('Sec-CH-UA-Platform'),
      }),
    );
  });
  router.post('/v1/challenge/alternative', openCors, async function alternative(ctx) {
    ctx.body = success(await requestAlternative(deps, readBody(ctx, alternativeBody), ctx.ip));
  });
  router.post('/v1/challenge/submit', openCors, async function submit(ctx) {
    ctx.body = success(await submitChallenge(deps, readBody(ctx, submitBody)));
  });
}
