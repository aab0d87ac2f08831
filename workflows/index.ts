export { missionWorkflow } from './mission-workflow.ts';
export { scriptFactoryWorkflow } from './script-factory.ts';
export { scheduleRunWorkflow } from './schedule-run.ts';
export { webhookDeliveryWorkflow } from './webhook-delivery.ts';
export { evalRunWorkflow } from './eval-run.ts';
