import { Command } from 'commander';
import { keyCommands } from './commands/key';
import { organizationCommands } from './commands/org';
import { policyCommands } from './commands/policy';
import { serveCommands } from './commands/serve';
import { userCommands } from './commands/user';

const program = new Command('gatehouse')
  .description('Gatehouse: business data for AI agents and scripts, every write gated by policy')
  .option('--json', 'print machine-readable JSON')
  .showHelpAfterError();

for (const command of [...serveCommands(), organizationCommands(), keyCommands(), userCommands(), policyCommands()]) {
  program.addCommand(command);
}

await program.parseAsync();
