import { Command, CommanderError } from 'commander';
import { auditCommands } from './commands/audit';
import { dataCommands } from './commands/data';
import { keyCommands } from './commands/key';
import { organizationCommands } from './commands/org';
import { policyCommands } from './commands/policy';
import { secretsCommands } from './commands/secrets';
import { serveCommands } from './commands/serve';
import { temporalCommands } from './commands/temporal';
import { userCommands } from './commands/user';
import { webhookCommands } from './commands/webhook';

const program = new Command('gatehouse')
  .description('Gatehouse: business data for AI agents and scripts, every write gated by policy')
  .option('--json', 'print machine-readable JSON')
  .showHelpAfterError();

for (const command of [...serveCommands(), organizationCommands(), keyCommands(), userCommands(), policyCommands(), temporalCommands(), secretsCommands(), auditCommands(), webhookCommands(), ...dataCommands()]) {
  program.addCommand(command);
}

// Argument errors read like every other failure, as JSON under --json.
const wantsJson = process.argv.includes('--json');
const everyCommand = (command: Command): Command[] => [command, ...command.commands.flatMap(everyCommand)];
for (const command of everyCommand(program)) {
  command.exitOverride();
  if (wantsJson) command.configureOutput({ writeErr: () => {} });
}
try {
  await program.parseAsync();
} catch (error) {
  if (!(error instanceof CommanderError)) throw error;
  if (error.exitCode === 0) process.exit(0);
  if (wantsJson) {
    const message = error.message.replace(/^error: /, '');
    process.stdout.write(`${JSON.stringify({ error: { code: 'invalid_arguments', message } }, null, 2)}\n`);
  }
  process.exit(error.exitCode);
}
