import { NativeConnection } from '@temporalio/worker';
import { Command } from 'commander';
import { loadConfig } from '../../runtime/config';
import { ensureSearchAttributes, searchAttributeNames } from '../../runtime/search-attributes';
import { serveCodec } from '../../runtime/codec-server';
import { EncryptionCodec } from '../../runtime/payload-codec';
import { installTemporalRuntime, nativeConnectionOptions } from '../../runtime/temporal';
import { emit, fail, keyCommand } from '../output';

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
        const connection = await NativeConnection.connect(nativeConnectionOptions(config, config.temporal.address));
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

  temporal.addCommand(
    keyCommand('payload-key', 'Print a new payload encryption key (id:base64) for PAYLOAD_ENCRYPTION_KEYS', 'recorded with every payload it encrypts'),
  );

  temporal
    .command('codec')
    .description(
      'Serve the codec endpoint the Temporal Web UI decrypts payloads with (PAYLOAD_ENCRYPTION_KEYS; on CODEC_HOST:CODEC_PORT, for TEMPORAL_UI_URL and CODEC_ALLOWED_ORIGINS)',
    )
    .action(async (_options: unknown, command: Command) => {
      try {
        const config = loadConfig();
        const { keys, codecHost, codecPort, codecOrigins } = config.payloads;
        if (!keys) throw new Error('gatehouse temporal codec needs PAYLOAD_ENCRYPTION_KEYS, the keys the api and the worker encrypt with');
        if (codecPort === 'off') throw new Error('CODEC_PORT is off');
        const allowedOrigins = [...(config.temporal.uiUrl ? [new URL(config.temporal.uiUrl).origin] : []), ...codecOrigins];
        const codec = await serveCodec({ codec: new EncryptionCodec(keys), host: codecHost, port: codecPort, allowedOrigins });
        emit(command, { codec_url: codec.url, allowed_origins: allowedOrigins }, [
          `Payload codec at ${codec.url} (POST /decode, /encode)`,
          allowedOrigins.length
            ? `Browsers may call it from ${allowedOrigins.join(', ')}`
            : 'No browser origin may call it (set TEMPORAL_UI_URL to the Web UI); the CLI may: temporal workflow show --codec-endpoint ' + codec.url,
        ]);
        await new Promise<void>((resolve) => {
          process.once('SIGINT', resolve);
          process.once('SIGTERM', resolve);
        });
        await codec.close();
      } catch (error) {
        fail(command, error);
      }
    });
  return temporal;
}
