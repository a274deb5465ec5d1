import type { Settings } from '../../lib/settings.js';
import type { CommandContext } from './command.js';
import { type OperatorDatabase, openOperatorDatabase } from './database.js';

/** A context whose resources open on first use; `close` releases them, last opened first. */
export function createCommandContext(
  settings: Settings,
  log: (line: string) => void,
): CommandContext & { close(): Promise<void> } {
  const closers: (() => Promise<void>)[] = [];
  let database: Promise<OperatorDatabase> | undefined;
  return {
    settings,
    async em() {
      database ??= openOperatorDatabase(settings, log).then((db) => {
        closers.push(() => db.close());
        return db;
      });
      return (await database).orm.em.fork();
    },
    onClose(close: () => Promise<void>) {
      closers.push(close);
    },
    async close() {
      // Every closer runs even when one fails; the first failure is reported.
      let failure: unknown;
      for (const close of closers.splice(0).reverse()) {
        await close().catch((error) => {
          failure ??= error;
        });
      }
      if (failure) throw failure;
    },
  };
}
