import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContextOptions, type Locator, type Page } from 'playwright-core';

/** Installed by the system (apt-get install chromium, done by `npm test` where it can); the tests download nothing. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const chromiumArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe-core in the page (WCAG 2.1 A and AA rules, best practices) and answers the serious and critical
 * violations. Evaluated through the DevTools protocol, so the page's content security policy need not allow it.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const page = globalThis as unknown as { document: unknown; axe: { run(context: unknown, options: object): Promise<{ violations: AxeViolation[] }> } };
    const result = await page.axe.run(page.document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations;
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}

/**
 * Saves a screenshot for the README when SCREENSHOTS names a folder (SCREENSHOTS=docs/screenshots): the whole page,
 * or what the window shows (`fullPage: false`, for a long page whose point is what is in view).
 */
export async function screenshot(page: Page, name: string, { fullPage = true }: { fullPage?: boolean } = {}): Promise<void> {
  const folder = process.env.SCREENSHOTS;
  if (!folder) return;
  mkdirSync(folder, { recursive: true });
  await page.screenshot({ path: join(folder, `${name}.png`), fullPage });
}

/**
 * A new browser context signed in to the console at `origin` as the person, on a 1280 px wide page whose script
 * errors are collected in `pageErrors`; `options` add to the context's (downloads, clipboard permissions).
 */
export async function signedInConsole(
  browser: Browser,
  origin: string,
  who: { slug: string; email: string; password: string },
  pageErrors: string[],
  options: BrowserContextOptions = {},
): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, ...options });
  const opened = await context.newPage();
  opened.on('pageerror', (error) => pageErrors.push(error.message));
  await opened.goto(`${origin}/`);
  await opened.getByLabel('Organization').fill(who.slug);
  await opened.getByLabel('Email').fill(who.email);
  await opened.getByLabel('Password').fill(who.password);
  await opened.getByRole('button', { name: 'Sign in' }).click();
  await opened.getByRole('navigation', { name: 'Console' }).waitFor();
  return opened;
}

/** A chart's figures as its table holds them: each row's cells (the first names the row), the headings first. */
export async function chartFigures(figure: Locator): Promise<string[][]> {
  const details = figure.locator('details.chart-table');
  if (!(await details.evaluate((element) => (element as unknown as { open: boolean }).open))) await details.locator('summary').click();
  return figure.locator('table tr').evaluateAll((rows) => rows.map((row) => [...(row as unknown as { cells: { textContent: string }[] }).cells].map((cell) => cell.textContent.trim())));
}

/** A chart's sentence, as a screen reader is given it (its aria-describedby). */
export async function chartDescription(figure: Locator): Promise<string> {
  const id = await figure.getAttribute('aria-describedby');
  return figure.page().locator(`[id="${id}"]`).innerText();
}
