export { missionWorkflow } from './mission-workflow.ts';
export { scriptFactoryWorkflow } from './script-factory.ts';
