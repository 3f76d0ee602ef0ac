import type Router from '@koa/router';

export function openapiRoutes(router: Router): void {
  // Built on the first request, not at start-up: every endpoint's zod schemas turned into JSON Schema held
  // ~5 MiB of every replica's resident memory from the start, for a document few of them serve (issue 14).
  router.get('/openapi.json', async function openapi(ctx) {
    ctx.body = (await import('../openapi.ts')).openapiDocument;
  });
}
