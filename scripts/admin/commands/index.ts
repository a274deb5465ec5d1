import type { Command } from '../command.js';
import { bootstrap } from './bootstrap.js';
import { keyCreate, keyRevoke } from './key.js';
import { limitsSet, limitsShow } from './limits.js';
import { numberCreate } from './number.js';
import { simulateInbound, simulateWebCall } from './simulate.js';
import { userCreate, userInvite, userRemove, userSetRole } from './user.js';
import { workspaceCreate } from './workspace.js';

/** Every operator command, in the order help lists them. A new command is one more line here. */
export const commands: Command[] = [
  workspaceCreate,
  userCreate,
  userSetRole,
  userRemove,
  userInvite,
  keyCreate,
  keyRevoke,
  numberCreate,
  limitsSet,
  limitsShow,
  bootstrap,
  simulateInbound,
  simulateWebCall,
];
