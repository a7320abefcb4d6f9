export { gatedWrite } from './gated-write';
