import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The rehearsal's hosts: each a Linux network namespace with an address of its own on one bridge, as each
 * container of the compose deployment is on compose's network. Names resolve as compose's DNS resolves them (a
 * service's name to every replica), through the hosts file `ip netns exec` puts in each namespace's /etc. This
 * machine (the root namespace) is the bridge's first address: the clients (writers, the browser, operators) run here.
 */

/** Every name the rehearsal gives the system starts so, so that a crashed run's leftovers are found and removed. */
const prefix = 'gatehouse';
const bridge = `${prefix}0`;
/** A /24 nobody else here uses; REHEARSAL_SUBNET (its first three octets) picks another. */
const subnet = process.env.REHEARSAL_SUBNET ?? '10.213.0';

export interface HostSpec {
  /** The host's name, which resolves to its address on every host: postgres, temporal, proxy, api-1… */
  name: string;
  /** The last octet of its address. */
  octet: number;
  /** A service name it answers to besides its own, as a compose service's replicas do (api, worker). */
  service?: string;
}

export interface Host {
  name: string;
  address: string;
  namespace: string;
  /** The command prefix that runs a program on this host. */
  exec: string[];
}

export const clientAddress = `${subnet}.1`;

export class Network {
  private constructor(readonly hosts: Map<string, Host>) {}

  /** Removes a crashed run's hosts, then makes the bridge and one namespace per host, each reaching the others. */
  static async create(specs: HostSpec[]): Promise<Network> {
    await removeLeftovers();
    const network = new Network(new Map());
    try {
      await ip('link', 'add', bridge, 'type', 'bridge');
      await ip('addr', 'add', `${clientAddress}/24`, 'dev', bridge);
      await ip('link', 'set', bridge, 'up');
      const lines = ['127.0.0.1 localhost', ...specs.flatMap((spec) => [`${subnet}.${spec.octet} ${spec.name}${spec.service ? ` ${spec.service}` : ''}`])];
      for (const spec of specs) {
        const host: Host = {
          name: spec.name,
          address: `${subnet}.${spec.octet}`,
          namespace: `${prefix}-${spec.name}`,
          exec: ['ip', 'netns', 'exec', `${prefix}-${spec.name}`],
        };
        network.hosts.set(spec.name, host);
        await ip('netns', 'add', host.namespace);
        await ip('link', 'add', hostLink(host), 'type', 'veth', 'peer', 'name', 'eth0', 'netns', host.namespace);
        await ip('link', 'set', hostLink(host), 'master', bridge, 'up');
        await ip('-n', host.namespace, 'addr', 'add', `${host.address}/24`, 'dev', 'eth0');
        await ip('-n', host.namespace, 'link', 'set', 'eth0', 'up');
        await ip('-n', host.namespace, 'link', 'set', 'lo', 'up');
        mkdirSync(`/etc/netns/${host.namespace}`, { recursive: true });
        writeFileSync(`/etc/netns/${host.namespace}/hosts`, `${lines.join('\n')}\n`);
      }
      return network;
    } catch (error) {
      await removeLeftovers();
      throw new Error(`the rehearsal's hosts could not be made (network namespaces need root and iproute2): ${(error as Error).message.split('\n')[0]}`, { cause: error });
    }
  }

  host(name: string): Host {
    const host = this.hosts.get(name);
    if (!host) throw new Error(`no host ${name}`);
    return host;
  }

  /** Cuts the host off the network: its link goes down, so that packets to and from it are lost, as a pulled cable. */
  async cut(name: string): Promise<void> {
    await ip('link', 'set', hostLink(this.host(name)), 'down');
  }

  async restore(name: string): Promise<void> {
    await ip('link', 'set', hostLink(this.host(name)), 'up');
  }

  /** Ends whatever still runs on the hosts, and removes them and the bridge. */
  async destroy(): Promise<void> {
    await removeLeftovers();
  }
}

/** The bridge's end of the host's cable (at most 15 characters, as Linux wants). */
const hostLink = (host: Host) => `gh-${host.name}`.slice(0, 15);

const ip = (...args: string[]) => run('ip', args);

async function removeLeftovers(): Promise<void> {
  const { stdout } = await run('ip', ['netns', 'list']);
  const namespaces = stdout
    .split('\n')
    .map((line) => line.split(' ')[0]!)
    .filter((name) => name.startsWith(`${prefix}-`));
  for (const namespace of namespaces) {
    const { stdout: pids } = await run('ip', ['netns', 'pids', namespace]).catch(() => ({ stdout: '' }));
    for (const pid of pids.split('\n').map(Number).filter(Boolean)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await run('ip', ['netns', 'del', namespace]).catch(() => {});
    rmSync(`/etc/netns/${namespace}`, { recursive: true, force: true });
  }
  await run('ip', ['link', 'del', bridge]).catch(() => {});
}
