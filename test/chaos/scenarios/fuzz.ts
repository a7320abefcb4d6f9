import { spawn } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { seconds, type Scenario } from '../scenario';

const projectRoot = fileURLToPath(new URL('../../..', import.meta.url));
const fuzzTest = 'test/api/fuzz.test.ts';
/** vitest's own entry (what `npx vitest` runs), so that a budget's SIGTERM reaches vitest itself, not npx. */
const vitestEntry = fileURLToPath(new URL('../../../node_modules/vitest/vitest.mjs', import.meta.url));

/**
 * The bigger run of the fuzz test: FUZZ_RUNS random cases per route and tool, where npm test runs 1 (and so is the
 * short version). CHAOS_FUZZ_SIZE sets the size; CHAOS_FUZZ_SIZE_VARIABLE names another variable should the test's
 * change.
 */
export const fuzz: Scenario = {
  id: 'fuzz',
  title: 'The bigger fuzz run',
  fullOnly: true,
  budgetMs: { full: 30 * 60_000, short: 10 * 60_000 },
  async run(context) {
    const variable = process.env.CHAOS_FUZZ_SIZE_VARIABLE ?? 'FUZZ_RUNS';
    const size = process.env.CHAOS_FUZZ_SIZE ?? (context.short ? '3' : '20');
    if (!existsSync(`${projectRoot}/${fuzzTest}`)) return { did: '', figures: [], failures: [], skipped: `${fuzzTest} does not exist yet` };

    const started = Date.now();
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [vitestEntry, 'run', fuzzTest], { cwd: projectRoot, env: { ...process.env, [variable]: size }, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      const file = createWriteStream(context.logFile('vitest.log'));
      const keep = (chunk: Buffer) => {
        file.write(chunk);
        output = (output + chunk.toString()).slice(-20_000);
      };
      child.stdout.on('data', keep);
      child.stderr.on('data', keep);
      context.signal.addEventListener('abort', () => child.kill('SIGTERM'), { once: true });
      child.once('exit', (exitCode) => file.end(() => resolve({ code: exitCode, output })));
    });
    // vitest's summary line, without its colours: "Tests  12 passed (12)" or "Tests  1 failed | 11 passed (12)".
    const summary = stripVTControlCharacters(output).match(/^\s*Tests\s+(\d[^\n]*)$/m)?.[1]?.trim() ?? 'no summary';
    return {
      did: `vitest run ${fuzzTest} with ${variable}=${size}`,
      figures: [
        ['tests', summary],
        ['exit code', code ?? 'killed'],
        ['time', seconds(Date.now() - started)],
      ],
      failures: code === 0 ? [] : [`vitest exited with ${code}: ${summary} (its output: ${context.logFile('vitest.log')})`],
    };
  },
};
