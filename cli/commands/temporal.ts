import { NativeConnection } from '@temporalio/worker';
import { Command } from 'commander';
import { loadConfig } from '../../runtime/config';
import { ensureSearchAttributes, searchAttributeNames } from '../../runtime/search-attributes';
import { installTemporalRuntime } from '../../runtime/temporal';
import { emit, fail } from '../output';

export function temporalCommands(): Command {
  const temporal = new Command('temporal').description('Prepare a Temporal cluster for Gatehouse');

  temporal
    .command('setup')
    .description("Register Gatehouse's search attributes (Keyword) in the namespace, where they are missing")
    .action(async (_options: unknown, command: Command) => {
      try {
        const config = loadConfig();
        if (!config.temporal.address) throw new Error('gatehouse temporal setup needs TEMPORAL_ADDRESS (host:port of the Temporal server)');
        installTemporalRuntime(config);
        const connection = await NativeConnection.connect({ address: config.temporal.address });
        try {
          const { namespace } = config.temporal;
          const added = await ensureSearchAttributes(connection, namespace);
          emit(
            command,
            { namespace, added, present: searchAttributeNames },
            added.length > 0
              ? `Added to namespace ${namespace}: ${added.join(', ')}`
              : `Namespace ${namespace} has Gatehouse's search attributes already: ${searchAttributeNames.join(', ')}`,
          );
        } finally {
          await connection.close();
        }
      } catch (error) {
        fail(command, error);
      }
    });
  return temporal;
}
