import type Router from '@koa/router';
import { openapiDocument } from '../openapi.ts';

export function openapiRoutes(router: Router): void {
  router.get('/openapi.json', function openapi(ctx) {
    ctx.body = openapiDocument;
  });
}
