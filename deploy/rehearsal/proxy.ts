import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SupervisedProcess, until } from '../../test/chaos/processes';
import type { Host } from './hosts';

const caddyfile = fileURLToPath(new URL('../proxy/Caddyfile', import.meta.url));

/**
 * Caddy with compose's own Caddyfile, unchanged, on the proxy host: it finds the api replicas by the name `api`,
 * which resolves to every api host here as compose's DNS resolves it to every replica.
 */
export function proxyProcess(caddy: string, host: Host, folder: string, logDir: string): SupervisedProcess {
  const home = join(folder, 'caddy');
  mkdirSync(home, { recursive: true });
  return new SupervisedProcess(
    'proxy',
    {
      command: caddy,
      args: ['run', '--config', caddyfile, '--adapter', 'caddyfile'],
      // Caddy keeps its state (an autosaved configuration) under these; the rehearsal's, not the machine's.
      env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: home, XDG_DATA_HOME: home },
      prefix: host.exec,
    },
    join(logDir, 'proxy.log'),
    // Listening is ready: what it answers depends on the api replicas behind it.
    ({ signal }) =>
      until(async () => {
        const response = await fetch(`http://${host.address}:3000/healthz`, { signal: AbortSignal.timeout(1000) });
        await response.body?.cancel();
        return true;
      }, signal),
  );
}
