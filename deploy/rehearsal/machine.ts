import { isExecutable } from '../../runtime/temporal-binary';
import { postgresBinaries } from '../../test/chaos/postgres-cluster';
import { chromiumPath } from '../../test/support/browser';
import { has } from '../../test/support/commands';

/**
 * What the rehearsal needs of the machine, checked before anything starts, each missing piece named with what to
 * install: root and iproute2 (its hosts are network namespaces), PostgreSQL's server binaries, Go (it builds the
 * binaries it lacks) and, for the console's journey, Chromium. `npm test` installs PostgreSQL and Chromium where it can.
 */
export async function checkMachine(options: { browser: boolean }): Promise<void> {
  const missing: string[] = [];
  if (process.platform !== 'linux' || process.getuid?.() !== 0) missing.push('root on Linux (each host of the rehearsal is a network namespace)');
  if (!(await has('ip'))) missing.push("iproute2's ip (apt-get install iproute2)");
  try {
    postgresBinaries();
  } catch (error) {
    missing.push((error as Error).message);
  }
  if (!(await has('go'))) missing.push('Go 1.23 or later, to build Temporal\'s server, its SQL tool and Caddy (or set TEMPORAL_SERVER_BIN, TEMPORAL_SQL_TOOL and CADDY_BIN)');
  if (options.browser && !isExecutable(chromiumPath)) missing.push(`Chromium at ${chromiumPath} (apt-get install chromium, or set CHROMIUM_PATH)`);
  if (missing.length) throw new Error(`the deployment rehearsal needs:\n${missing.map((line) => `  - ${line}`).join('\n')}`);
}
