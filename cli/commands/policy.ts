import { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { findOrganization } from '../../domain/identity/organizations';
import { currentPolicySet, setPolicySet } from '../../domain/gate/policies';
import { emit, withDatabase } from '../output';

export function policyCommands(): Command {
  const policy = new Command('policy').description("An organization's Cedar policies, which decide every gated write");

  policy
    .command('set')
    .description('Replace the policy set with a Cedar file; a set that does not parse is refused and the old one stays')
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--file <path>', 'a .cedar file')
    .action(
      withDatabase(async (db, options: { org: string; file: string }, command) => {
        const org = await findOrganization(db, options.org);
        const source = await readFile(options.file, 'utf8');
        const saved = await setPolicySet(db, org.id, source, `cli:${options.file}`);
        emit(command, saved, `Policy set version ${saved.version} of ${org.slug} is in force`);
      }),
    );

  policy
    .command('show')
    .description('Print the policy set in force')
    .requiredOption('--org <slug>', 'the organization')
    .action(
      withDatabase(async (db, options: { org: string }, command) => {
        const org = await findOrganization(db, options.org);
        const current = await currentPolicySet(db, org.id);
        emit(command, current, [`// ${org.slug}: policy set version ${current.version} (${current.createdAt})`, current.source.trimEnd()]);
      }),
    );
  return policy;
}
