import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/**
 * docker-compose.yml as the rehearsal reads it: the one source of the versions and the environment both run. The
 * rehearsal runs natively what compose would run in containers, so it takes its images' tags and its services'
 * environment from the file itself, interpolated as compose interpolates them.
 */

const composeUrl = new URL('../../docker-compose.yml', import.meta.url);

export interface ComposeService {
  image?: string;
  volumes?: string[];
  environment?: Record<string, string | number | boolean | null>;
  command?: string[];
  entrypoint?: string[];
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
}

export function readCompose(): ComposeFile {
  return parse(readFileSync(composeUrl, 'utf8'), { merge: true }) as ComposeFile;
}

export type Variables = Record<string, string | undefined>;

/**
 * Compose's interpolation (https://docs.docker.com/reference/compose-file/interpolation/): `$$` is a dollar,
 * `${NAME}` and `$NAME` the variable, `${NAME:-default}` and `${NAME-default}` with a default (when unset or empty /
 * when unset), `${NAME:?message}` and `${NAME?message}` required. The rehearsal's own variables stand for `.env`.
 */
export function interpolate(text: string, variables: Variables): string {
  return text.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (match, braced?: string, operator?: string, argument?: string, bare?: string) => {
    if (match === '$$') return '$';
    const name = (braced ?? bare)!;
    const value = variables[name];
    const missing = operator?.startsWith(':') ? !value : value === undefined;
    if (!operator || !missing) return value ?? '';
    if (operator.endsWith('-')) return interpolate(argument ?? '', variables);
    throw new Error(`docker-compose.yml needs ${name}: ${argument || 'required'}`);
  });
}

/** A service's environment as compose would hand it to the container, given the variables (`.env`, the shell). */
export function serviceEnvironment(compose: ComposeFile, service: string, variables: Variables): Record<string, string> {
  const environment = compose.services[service]?.environment;
  if (!environment) throw new Error(`docker-compose.yml has no environment for the service ${service}`);
  return Object.fromEntries(Object.entries(environment).map(([name, value]) => [name, interpolate(value === null ? '' : String(value), variables)]));
}

/**
 * Where a path inside a service's container is in this repository, by the service's bind mounts
 * (`./deploy/temporal/dynamicconfig:/etc/temporal/config/dynamicconfig:ro`): the rehearsal reads in place what
 * compose mounts.
 */
export function mountedPath(compose: ComposeFile, service: string, containerPath: string): string {
  for (const volume of compose.services[service]?.volumes ?? []) {
    const [source, target] = volume.split(':') as [string, string];
    if (source.startsWith('.') && (containerPath === target || containerPath.startsWith(`${target}/`))) {
      return fileURLToPath(new URL(`${source}${containerPath.slice(target.length)}`, composeUrl));
    }
  }
  throw new Error(`docker-compose.yml mounts nothing at ${containerPath} in the service ${service}`);
}

/** An image's tag as the file pins it (its default, when no variable overrides it). */
export function imageTag(compose: ComposeFile, service: string): string {
  const image = compose.services[service]?.image;
  const reference = image && interpolate(image, {});
  const tag = reference?.slice(reference.lastIndexOf(':') + 1);
  if (!tag) throw new Error(`docker-compose.yml pins no image tag for the service ${service}`);
  return tag;
}

/** The versions the rehearsal builds natively: those of the images compose runs. */
export interface PinnedVersions {
  /** temporalio/server: the server binary. */
  temporalServer: string;
  /** temporalio/admin-tools: temporal-sql-tool. */
  temporalAdminTools: string;
  /** caddy: the proxy. */
  caddy: string;
}

export function pinnedVersions(compose: ComposeFile = readCompose()): PinnedVersions {
  return {
    temporalServer: imageTag(compose, 'temporal'),
    temporalAdminTools: imageTag(compose, 'temporal-schema'),
    caddy: imageTag(compose, 'proxy'),
  };
}
