import { describe, expect, it } from 'vitest';
import { LOADER_BUDGET_BYTES, measureWidget } from '../size.ts';

describe('widget size', () => {
  it('the loader stays within its gzipped budget; the challenge UI and worker are separate files', async () => {
    const [loader, ui, worker] = await measureWidget();
    expect(loader?.gzip).toBeLessThanOrEqual(LOADER_BUDGET_BYTES);
    expect(ui?.name).toMatch(/^gatehouse-ui\.[\w-]+\.js$/);
    expect(worker?.name).toMatch(/^gatehouse-pow\.[\w-]+\.js$/);
  });
});
