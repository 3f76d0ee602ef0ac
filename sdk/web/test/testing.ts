/**
 * The widget's testing entry (`@gatehouse/web/testing`): what other folders' tests and the lab use to drive
 * the widget in a real browser (Chromium through playwright-core, a page server, the widget's own events,
 * axe-core). Its tests use the modules directly.
 */
export * from './a11y.ts';
export * from './browser.ts';
export * from './helpers.ts';
export * from './page-server.ts';
