// Every workflow the workers run (the bundle's entry point). A plain list of re-exports.
export { callWorkflow } from './call-workflow.js';
export { simulatedCalleeWorkflow } from './simulated-callee-workflow.js';
