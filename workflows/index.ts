export { missionWorkflow } from './mission-workflow.ts';
