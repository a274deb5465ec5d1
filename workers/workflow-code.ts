import { fileURLToPath } from 'node:url';

/** The bundle entry of every worker: all workflows, re-exported by workflows/index.ts. */
export const callWorkflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
