// Every workflow the workers run (the bundle's entry point). A plain list of re-exports.
export { callWorkflow } from './call-workflow.js';
export { eventFanOutWorkflow } from './event-fan-out.js';
export { simulatedCalleeWorkflow } from './simulated-callee-workflow.js';
export { webhookDeliveryWorkflow } from './webhook-delivery.js';
